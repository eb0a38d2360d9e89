package config

import (
	"strings"
	"testing"
)

func TestPinningKey(t *testing.T) {
	for _, c := range []struct {
		yaml     string
		enabled  bool
		firstUse string
		err      string
	}{
		{"", true, FirstUseTrust, ""},
		{"pinning: false\n", false, FirstUseTrust, ""},
		{"pinning: true\n", true, FirstUseTrust, ""},
		{"pinning: {first_use: quarantine}\n", true, FirstUseQuarantine, ""},
		{"pinning: {first_use: trust}\n", true, FirstUseTrust, ""},
		{"pinning: {first_use: never}\n", false, "", "first_use: use trust or quarantine"},
		{"pinning: {firstuse: trust}\n", false, "", "unknown key 'firstuse'"},
		{"pinning: maybe\n", false, "", "pinning: use true, false"},
	} {
		cfg, err := Parse("hub.yaml", []byte("servers:\n  a: {command: x}\n"+c.yaml), nil)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err = %v, want %q", c.yaml, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.yaml, err)
			continue
		}
		if cfg.Pinning.Enabled() != c.enabled || cfg.Pinning.FirstUsePolicy() != c.firstUse {
			t.Errorf("%q: enabled %v first_use %q", c.yaml, cfg.Pinning.Enabled(), cfg.Pinning.FirstUsePolicy())
		}
	}
}
