package hub

// Tests of stats.go: a session's counters (item ST1 of
// docs/search-tools.md).

import (
	"fmt"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func TestSpecST1Stats(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	c.search(map[string]any{"tool_names": []string{"math__add"}}) // 1 discovered
	c.search(map[string]any{"tool_names": []string{"math__add"}}) // 0
	c.search(map[string]any{"query": "zzyzx"})                    // 0
	c.search(map[string]any{"server_name": "weather"})            // 2
	c.search(map[string]any{})                                    // error
	c.call("math__add", map[string]any{"a": 1, "b": 2})           // math
	c.call(CallToolName, map[string]any{"name": "math__add", "arguments": map[string]any{"a": 2, "b": 2}})
	c.call("clock__now", map[string]any{})                         // clock
	c.call(CallToolName, map[string]any{"name": "math__multiply"}) // not loaded: error
	c.call(CallToolName, map[string]any{"name": "nope"})           // unknown: error
	st := h.sessionList()[0].Stats()
	if st.Searches != 4 {
		t.Errorf("searches = %d, want 4 (the invalid call is an error, not a search)", st.Searches)
	}
	if st.ToolsDiscovered != 3 {
		t.Errorf("tools discovered = %d, want 3", st.ToolsDiscovered)
	}
	wantTool := map[string]int{SearchToolsName: 5, CallToolName: 3, "math__add": 2, "clock__now": 1}
	if fmt.Sprint(st.CallsByTool) != fmt.Sprint(wantTool) {
		t.Errorf("calls by tool = %v, want %v", st.CallsByTool, wantTool)
	}
	wantServer := map[string]int{MetaServer: 8, "math": 2, "clock": 1}
	if fmt.Sprint(st.CallsByServer) != fmt.Sprint(wantServer) {
		t.Errorf("calls by server = %v, want %v", st.CallsByServer, wantServer)
	}
	if st.Errors != 3 {
		t.Errorf("errors = %d, want 3", st.Errors)
	}
}
