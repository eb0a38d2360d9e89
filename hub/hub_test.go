package hub

// Tests of hub.go: upstreams that join late or change their tools.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestLateServer: a server slower than StartupWait joins later; its tools
// appear and the client gets notifications/tools/list_changed.
func TestLateServer(t *testing.T) {
	t.Parallel()
	cfg := fixture.Config(
		fixture.ServerEntry("fast"),
		fixture.StdioEntry(t, "late", "-tools", "echo", "-start-delay", "5s"),
	)
	start := time.Now()
	h, _ := agHub(t, cfg, Options{
		StartupWait: 200 * time.Millisecond,
		Builtin:     fixture.Builtins(map[string]func() *mcp.Server{"fast": func() *mcp.Server { return fixture.EchoServer("fast", "echo") }}),
	})
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("hub.New waited %s for a slow server", took)
	}
	changed := make(chan struct{}, 10)
	cs := fixture.Client(t, h, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if got := fixture.SortedToolNames(t, cs); !slices.Equal(got, []string{"fast__echo"}) {
		t.Fatalf("tools/list before the late server = %v", got)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed after the late server connected")
	}
	if got := fixture.SortedToolNames(t, cs); !slices.Equal(got, []string{"fast__echo", "late__echo"}) {
		t.Fatalf("tools/list after the late server = %v", got)
	}
	if got := fixture.ResultText(fixture.CallTool(t, cs, "late__echo", nil)); got != "late:echo:{}" {
		t.Errorf("late__echo -> %q", got)
	}
}

// TestUpstreamToolsChange: an upstream's own list_changed (a tool added,
// another removed) reaches the client as list_changed with the new list.
func TestUpstreamToolsChange(t *testing.T) {
	cfg := fixture.Config(fixture.StdioEntry(t, "dyn", "-tools", "keep,drop",
		"-add-tool-after", "200ms", "-add-tool", "added", "-remove-tool-after", "200ms", "-remove-tool", "drop"))
	h, _ := agHub(t, cfg, Options{})
	changed := make(chan struct{}, 10)
	cs := fixture.Client(t, h, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	want := []string{"dyn__added", "dyn__keep"}
	fixture.Eventually(t, 30*time.Second, "the new tool list", func() bool {
		return slices.Equal(fixture.SortedToolNames(t, cs), want)
	})
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed")
	}
}
