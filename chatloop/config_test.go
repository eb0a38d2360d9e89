package chatloop

import (
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

func TestResolveModel(t *testing.T) {
	cfg := &Config{Models: map[string]config.Model{"a": {}, "b": {}}}
	if _, _, _, err := cfg.ResolveModel(""); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Errorf("two models, no default: err = %v", err)
	}
	if _, _, _, err := cfg.ResolveModel("zz"); err == nil || !strings.Contains(err.Error(), `unknown model "zz"; configured models: a, b`) {
		t.Errorf("unknown: err = %v", err)
	}
	one := &Config{Models: map[string]config.Model{"only": {}}}
	if name, _, _, err := one.ResolveModel(""); err != nil || name != "only" {
		t.Errorf("single model: %q, %v", name, err)
	}
	if _, _, _, err := (&Config{}).ResolveModel(""); err == nil || !strings.Contains(err.Error(), "no models configured") {
		t.Errorf("none: err = %v", err)
	}
}
