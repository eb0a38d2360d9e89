package hub

// Tests of session.go: sessions load tools independently and follow
// upstream changes (items P3, P4 of docs/search-tools.md).

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func TestSpecP3SessionsIndependent(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	a := connectClient(t, h, "")
	b := connectClient(t, h, "")
	a.search(map[string]any{"tool_names": []string{"math__add"}})
	b.search(map[string]any{"query": "current weather"})
	base := []string{CallToolName, "clock__now", SearchToolsName}
	if got, want := a.toolNames(), fixture.Sorted(append(base, "math__add")...); !slices.Equal(got, want) {
		t.Errorf("session A: %v, want %v", got, want)
	}
	bt := b.toolNames()
	if slices.Contains(bt, "math__add") || !slices.Contains(bt, "weather__get_current") {
		t.Errorf("session B: %v", bt)
	}
	if na, nb := a.listChanged(1), b.listChanged(1); na != 1 || nb != 1 {
		t.Errorf("list_changed: A %d, B %d; want 1 each", na, nb)
	}
	// A's deferred tool is still not callable in B.
	if res := b.call("math__add", map[string]any{"a": 1, "b": 2}); !res.IsError {
		t.Errorf("B called A's loaded tool: %s", fixture.ResultText(res))
	}
}

func TestSpecP4UpstreamChanges(t *testing.T) {
	fx := fixture.NewServers()
	h := newTestHub(t, fixture.SmallConfig(), fx)
	c := connectClient(t, h, "")
	c.search(map[string]any{"tool_names": []string{"weather__get_forecast", "weather__get_current"}})
	if n := c.listChanged(1); n != 1 {
		t.Fatalf("%d list_changed after loading, want 1", n)
	}

	// Added upstream: searchable (and in the manifest).
	fx.AddTool("weather", fixture.Tool{Name: "get_alerts", Description: "Get severe weather alerts for a region.", Schema: `{"type":"object","properties":{"region":{"type":"string"}},"required":["region"]}`})
	waitFor(t, "the new tool is in the manifest", func() bool {
		return strings.Contains(searchDescription(t, c), "- weather (3 tools): weather__get_alerts, weather__get_current, weather__get_forecast")
	})
	if n := c.listChanged(2); n < 2 {
		t.Errorf("search_tools' manifest changed without list_changed (%d)", n)
	}
	text, _ := c.search(map[string]any{"query": "severe alerts"})
	if found := foundNames(text); len(found) == 0 || found[0] != "weather__get_alerts" {
		t.Fatalf("new tool not found:\n%s", text)
	}
	for _, name := range []string{"weather__get_forecast", "weather__get_current", "weather__get_alerts"} {
		if c.tool(name) == nil {
			t.Errorf("%s is not listed after the rebuild", name)
		}
	}

	// Removed upstream while loaded: gone, and the session is notified;
	// the loaded tools that still exist stay loaded.
	n := c.listChanged(0)
	fx.RemoveTools("weather", "get_forecast")
	waitFor(t, "the removed tool leaves the list", func() bool { return c.tool("weather__get_forecast") == nil })
	if got := c.listChanged(n + 1); got <= n {
		t.Errorf("no list_changed after the loaded tool was removed (%d -> %d)", n, got)
	}
	want := fixture.Sorted(CallToolName, "clock__now", SearchToolsName, "weather__get_alerts", "weather__get_current")
	if got := c.toolNames(); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if _, err := c.callErr("weather__get_forecast", map[string]any{"location": "x"}); err == nil {
		t.Error("the removed tool is still callable")
	}
	if res := c.call("weather__get_current", map[string]any{"location": "Kyiv"}); res.IsError {
		t.Errorf("a tool that stayed loaded: %s", fixture.ResultText(res))
	}
	// Removing a tool of a deferred server the session never loaded changes
	// only the manifest; a change elsewhere (a catalog rebuild that leaves
	// this session's list alone) sends nothing.
	n = c.listChanged(0)
	fx.AddTool("clock", fixture.Tool{Name: "zone", Description: "", Schema: `{"type":"object"}`})
	waitFor(t, "the eager tool appears", func() bool { return c.tool("clock__zone") != nil })
	if got := c.listChanged(n + 1); got != n+1 {
		t.Errorf("eager tool added: %d list_changed, want 1", got-n)
	}
}

// TestSessionChain: a session's receiving chain is declared once, in
// order (Session.receiving), a layer whose hook is not set left out; and
// go-sdk runs the layers in the order declared, the first outermost.
func TestSessionChain(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	layer := func(name string) mcp.Middleware {
		return func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "ping" {
					mu.Lock()
					ran = append(ran, name)
					mu.Unlock()
				}
				return next(ctx, method, req)
			}
		}
	}
	s := &Session{hub: &Hub{}}
	if got, want := s.receiving(SessionOptions{}).names(), []string{"guard", "logErrors", "route"}; !slices.Equal(got, want) {
		t.Errorf("without hooks: %q, want %q", got, want)
	}
	s.hub.hooks.Observe = func(*Session) mcp.Middleware { return layer("observe") }
	opts := SessionOptions{Persist: func(*Session) mcp.Middleware { return layer("persist") }}
	if got, want := s.receiving(opts).names(), []string{"persist", "observe", "guard", "logErrors", "route"}; !slices.Equal(got, want) {
		t.Errorf("with hooks: %q, want %q", got, want)
	}
	if got, want := s.sending().names(), []string{"notice"}; !slices.Equal(got, want) {
		t.Errorf("sending: %q, want %q", got, want)
	}

	server := mcp.NewServer(&mcp.Implementation{Name: "chain"}, nil)
	server.AddReceivingMiddleware(chain{{"first", layer("first")}, {"absent", nil}, {"second", layer("second")}, {"third", layer("third")}}.middleware()...)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"first", "second", "third"}; !slices.Equal(ran, want) {
		t.Errorf("go-sdk ran %q, want %q", ran, want)
	}
}
