package hub

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestSchemaKeyOrderKept: a schema reaches clients in the upstream's own key
// order (the go-sdk client would sort it), over stdio and streamable HTTP,
// and search_tools lists parameters in that order.
func TestSchemaKeyOrderKept(t *testing.T) {
	const schema = `{"type":"object","properties":{"zeta":{"type":"string","description":"last letter"},"alpha":{"type":"number"},"mid":{"type":"boolean"}},"required":["zeta"]}`
	path := filepath.Join(t.TempDir(), "schemas.json")
	if err := os.WriteFile(path, []byte(`{"order":`+schema+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-tools", "order", "-schema-file", path}
	stdio := &config.Server{Upstream: config.Upstream{Command: fixture.Build(t), Args: append([]string{"-name", "stdio"}, args...)}}
	stdio.Name = "stdio"
	web := &config.Server{Upstream: config.Upstream{URL: fixture.StartHTTP(t, append([]string{"-name", "web"}, args...)...)}}
	web.Name = "web"
	cfg := fixture.RestartingConfig(stdio, web)
	cfg.Discovery = config.Discovery{Enabled: true, DeferAll: true}
	h, _ := secHub(t, cfg)
	for _, name := range []string{"stdio__order", "web__order"} {
		tool, ok := h.Catalog().Tool(name)
		if !ok {
			t.Fatalf("%s not in the catalog", name)
		}
		if got := string(tool.Def.InputSchema.(json.RawMessage)); got != schema {
			t.Errorf("%s schema:\n got %s\nwant %s", name, got, schema)
		}
	}
	c := connectClient(t, h, "")
	text, _ := c.search(map[string]any{"tool_names": []string{"stdio__order"}})
	// The newly loaded tool's schema is given as the upstream wrote it.
	if !strings.Contains(text, "  Input schema: "+schema+"\n") {
		t.Errorf("schema not in the upstream's order:\n%s", text)
	}
}
