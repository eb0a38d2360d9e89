package hub

// Tests of hub.go: one hub over upstreams of every transport, and upstreams
// that join late or change their tools.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestAggregateMixedTransports aggregates four servers over every transport
// (in-process, stdio subprocess, streamable HTTP, SSE) into one tools/list,
// namespaced <server>__<tool>, and routes each call to its server.
func TestAggregateMixedTransports(t *testing.T) {
	t.Parallel()
	httpURL := fixture.ServeHTTP(t, agEchoServer("web", "fetch", "echo"))
	sseURL := agServeSSE(t, agEchoServer("old", "echo"))
	cfg := agConfig(
		agUp{name: "mem", cfg: config.Upstream{Builtin: "mem"}},
		agUp{name: "proc", cfg: agStdio(t, "-name", "proc", "-tools", "echo,alpha")},
		agUp{name: "web", cfg: config.Upstream{URL: httpURL}},
		agUp{name: "old", cfg: config.Upstream{URL: sseURL, Transport: config.TransportSSE}},
	)
	h, _ := agHub(t, cfg, Options{Builtin: agBuiltins(map[string]func() *mcp.Server{
		"mem": func() *mcp.Server { return agEchoServer("mem", "echo") },
	})})
	for _, st := range h.Upstreams() {
		if st.State != upstream.StateReady {
			t.Errorf("server %s: state %s (%s), want ready", st.Name, st.State, st.LastError)
		}
	}
	cs := agClient(t, h, nil)
	want := []string{"mem__echo", "old__echo", "proc__alpha", "proc__echo", "web__echo", "web__fetch"}
	if got := agToolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v, want %v", got, want)
	}
	for name, text := range map[string]string{
		"mem__echo":   `mem:echo:{"n":1}`,
		"proc__echo":  `proc:echo:{"n":1}`,
		"proc__alpha": `proc:alpha:{"n":1}`,
		"web__fetch":  `web:fetch:{"n":1}`,
		"old__echo":   `old:echo:{"n":1}`,
	} {
		if got := fixture.ResultText(agCall(t, cs, name, map[string]any{"n": 1})); got != text {
			t.Errorf("%s -> %q, want %q", name, got, text)
		}
	}
	// The same tools, over the hub's own HTTP transport.
	hcs := agHTTPClient(t, h, mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "0"}, nil))
	if got := agToolNames(t, hcs); !slices.Equal(got, want) {
		t.Fatalf("tools/list over HTTP = %v, want %v", got, want)
	}
	if got := fixture.ResultText(agCall(t, hcs, "old__echo", nil)); got != "old:echo:{}" {
		t.Errorf("old__echo over HTTP -> %q", got)
	}
	if tools := h.Catalog().Tools; len(tools) != len(want) {
		t.Errorf("catalog has %d tools, want %d", len(tools), len(want))
	}
	if status, servers := agHealth(h); status != "ok" || len(servers) != 4 {
		t.Errorf("health = %s %+v", status, servers)
	}
}

// TestLateServer: a server slower than StartupWait joins later; its tools
// appear and the client gets notifications/tools/list_changed.
func TestLateServer(t *testing.T) {
	t.Parallel()
	cfg := agConfig(
		agUp{name: "fast", cfg: config.Upstream{Builtin: "fast"}},
		agUp{name: "late", cfg: agStdio(t, "-name", "late", "-tools", "echo", "-start-delay", "5s")},
	)
	start := time.Now()
	h, _ := agHub(t, cfg, Options{
		StartupWait: 200 * time.Millisecond,
		Builtin:     agBuiltins(map[string]func() *mcp.Server{"fast": func() *mcp.Server { return agEchoServer("fast", "echo") }}),
	})
	if took := time.Since(start); took > 4*time.Second {
		t.Errorf("hub.New waited %s for a slow server", took)
	}
	changed := make(chan struct{}, 10)
	cs := agClient(t, h, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	if got := agToolNames(t, cs); !slices.Equal(got, []string{"fast__echo"}) {
		t.Fatalf("tools/list before the late server = %v", got)
	}
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed after the late server connected")
	}
	if got := agToolNames(t, cs); !slices.Equal(got, []string{"fast__echo", "late__echo"}) {
		t.Fatalf("tools/list after the late server = %v", got)
	}
	if got := fixture.ResultText(agCall(t, cs, "late__echo", nil)); got != "late:echo:{}" {
		t.Errorf("late__echo -> %q", got)
	}
}

// TestUpstreamToolsChange: an upstream's own list_changed (a tool added,
// another removed) reaches the client as list_changed with the new list.
func TestUpstreamToolsChange(t *testing.T) {
	cfg := agConfig(agUp{name: "dyn", cfg: agStdio(t, "-name", "dyn", "-tools", "keep,drop",
		"-add-tool-after", "200ms", "-add-tool", "added", "-remove-tool-after", "200ms", "-remove-tool", "drop")})
	h, _ := agHub(t, cfg, Options{})
	changed := make(chan struct{}, 10)
	cs := agClient(t, h, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	want := []string{"dyn__added", "dyn__keep"}
	fixture.Eventually(t, 30*time.Second, "the new tool list", func() bool {
		return slices.Equal(agToolNames(t, cs), want)
	})
	select {
	case <-changed:
	case <-time.After(30 * time.Second):
		t.Fatal("no tools/list_changed")
	}
}
