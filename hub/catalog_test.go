package hub

// Tests of catalog.go: which tools are deferred (item P2 of
// docs/search-tools.md).

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func TestSpecP2DeferAll(t *testing.T) {
	cfg := fixture.NewConfig(config.Discovery{Enabled: true, DeferAll: true},
		fixture.ServerEntry("weather"), fixture.ServerEntry("math"), fixture.ServerEntry("clock"))
	h := newTestHub(t, cfg, fixture.NewServers())
	c := connectClient(t, h, "")
	if got, want := c.toolNames(), fixture.Sorted(SearchToolsName, CallToolName); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if d := searchDescription(t, c); !strings.Contains(d, "- clock (1 tool): clock__now\n  Get the current time in a timezone.") {
		t.Errorf("manifest:\n%s", d)
	}
	// call_tool: false leaves only search_tools.
	cfg2 := fixture.NewConfig(config.Discovery{Enabled: true, DeferAll: true, CallTool: new(bool)}, fixture.ServerEntry("math"))
	c2 := connectClient(t, newTestHub(t, cfg2, fixture.NewServers()), "")
	if got := c2.toolNames(); !slices.Equal(got, []string{SearchToolsName}) {
		t.Errorf("call_tool off: tools = %v", got)
	}
	if ins := c2.cs.InitializeResult().Instructions; strings.Contains(ins, "call_tool") {
		t.Errorf("instructions mention call_tool while it is off:\n%s", ins)
	}
}
