package hub

// Tests of toolcall.go and forward.go: direct calls to a deferred tool, refused before it
// is loaded and forwarded after, or loaded on the call with
// auto_load_on_call (items C1, C2 of docs/search-tools.md); calls to a
// server that is down get a retryable error.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func TestSpecC1CallBeforeLoading(t *testing.T) {
	fx := fixture.NewServers()
	h := newTestHub(t, fixture.SmallConfig(), fx)
	c := connectClient(t, h, "")
	args := map[string]any{"location": "Paris"}
	res := c.call("weather__get_forecast", args)
	if !res.IsError || fixture.ResultText(res) != errForecastNotYet {
		t.Errorf("got %q (isError %v), want %q", fixture.ResultText(res), res.IsError, errForecastNotYet)
	}
	if n := len(fx.CallsTo("weather", "")); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
	c.search(map[string]any{"tool_names": []string{"weather__get_forecast"}})
	res = c.call("weather__get_forecast", args)
	if res.IsError || fixture.ResultText(res) != `weather.get_forecast {"location":"Paris"}` {
		t.Errorf("after loading: %q (isError %v)", fixture.ResultText(res), res.IsError)
	}
	if n := len(fx.CallsTo("weather", "get_forecast")); n != 1 {
		t.Errorf("the upstream was called %d times, want 1", n)
	}
}

func TestSpecC2AutoLoadOnCall(t *testing.T) {
	fx := fixture.NewServers()
	cfg := fixture.SmallConfig()
	cfg.Discovery.AutoLoadOnCall = true
	h := newTestHub(t, cfg, fx)
	c := connectClient(t, h, "")
	res := c.call("weather__get_forecast", map[string]any{"location": "Oslo"})
	if res.IsError || fixture.ResultText(res) != `weather.get_forecast {"location":"Oslo"}` {
		t.Errorf("got %q (isError %v)", fixture.ResultText(res), res.IsError)
	}
	if n := c.listChanged(1); n != 1 {
		t.Errorf("%d list_changed, want 1", n)
	}
	if c.tool("weather__get_forecast") == nil {
		t.Error("the tool was not loaded")
	}
	if n := len(fx.CallsTo("weather", "get_forecast")); n != 1 {
		t.Errorf("the upstream was called %d times, want 1", n)
	}
	// Through call_tool too.
	res = c.call(CallToolName, map[string]any{"name": "math__add", "arguments": map[string]any{"a": 1, "b": 2}})
	if res.IsError || fixture.ResultText(res) != `math.add {"a":1,"b":2}` {
		t.Errorf("call_tool: %q (isError %v)", fixture.ResultText(res), res.IsError)
	}
	if n := c.listChanged(2); n != 2 || c.tool("math__add") == nil {
		t.Errorf("call_tool with auto_load_on_call: %d list_changed, want 2, and math__add loaded", n)
	}
}

// TestFailingServer: a server that cannot start is reported and retried;
// the hub serves the others, and a call to the failing server's tools gets
// a retryable error, not "unknown tool". A failing server without a prefix
// cannot be recognised in a name: "unknown tool" says it may be one of its.
func TestFailingServer(t *testing.T) {
	cfg := fixture.Config(
		fixture.StdioEntry(t, "good", "-tools", "echo"),
		fixture.StdioEntry(t, "bad", "-fail-start"),
		fixture.Entry("missing", config.Upstream{Command: "/nonexistent/mcp-server"}),
		fixture.Entry("bare", fixture.Stdio(t, "-name", "bare", "-fail-start"), fixture.WithPrefix("")),
	)
	h, log := agHub(t, cfg, Options{})
	cs := fixture.Client(t, h, nil)
	if got := fixture.SortedToolNames(t, cs); !slices.Equal(got, []string{"good__echo"}) {
		t.Fatalf("tools/list = %v", got)
	}
	if got := fixture.ResultText(fixture.CallTool(t, cs, "good__echo", nil)); got != "good:echo:{}" {
		t.Errorf("good__echo -> %q", got)
	}
	states := map[string]upstream.Status{}
	for _, st := range h.Upstreams() {
		states[st.Name] = st
	}
	if st := states["bad"]; st.State == upstream.StateReady || !strings.Contains(st.LastError, "connect") {
		t.Errorf("bad server status = %+v", st)
	}
	if st := states["missing"]; st.State == upstream.StateReady || !strings.Contains(st.LastError, "not found") {
		t.Errorf("missing server status = %+v", st)
	}
	if status, _ := agHealth(h); status != "degraded" {
		t.Errorf("health status = %s, want degraded", status)
	}
	for _, name := range []string{"bad__anything", "missing__tool"} {
		res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: name})
		if err != nil {
			t.Errorf("%s: JSON-RPC error %v; want a retryable tool error", name, err)
			continue
		}
		text := fixture.ResultText(res)
		if !res.IsError || strings.Contains(text, "Unknown tool") || !strings.Contains(text, "retry") ||
			!strings.Contains(text, "server '"+strings.Split(name, "__")[0]+"'") {
			t.Errorf("%s -> isError=%v %q; want a retryable error naming the server", name, res.IsError, text)
		}
	}
	_, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "search_web"})
	if err == nil || !strings.Contains(err.Error(), "Unknown tool 'search_web'") ||
		!strings.Contains(err.Error(), "Server 'bare' has no prefix and has not listed its tools yet") {
		t.Errorf("unknown tool with an unprefixed server down: %v", err)
	}
	// The failure is retried in the background.
	log.WaitFor(t, "a retry of the failing server", 10*time.Second, func(s string) bool {
		return strings.Count(s, "server=bad") >= 2
	})
}

// TestServerDownAfterStart: a server whose process dies keeps its tools in
// the catalog; calls get a retryable "restarting" error, and it comes back.
func TestServerDownAfterStart(t *testing.T) {
	cfg := fixture.Config(fixture.StdioEntry(t, "flaky", "-tools", "echo", "-crash-after", "1"))
	h, _ := agHub(t, cfg, Options{})
	cs := fixture.Client(t, h, nil)
	if got := fixture.ResultText(fixture.CallTool(t, cs, "flaky__echo", nil)); got != "flaky:echo:{}" {
		t.Fatalf("first call -> %q", got)
	}
	fixture.Eventually(t, 10*time.Second, "the crash to be noticed", func() bool {
		return h.Upstreams()[0].Restarts > 0
	})
	// Until it is back, calls fail with a retryable error; afterwards they work.
	fixture.Eventually(t, 15*time.Second, "the server to come back", func() bool {
		res := fixture.CallTool(t, cs, "flaky__echo", nil)
		if res.IsError {
			if text := fixture.ResultText(res); !strings.Contains(text, "retry") || strings.Contains(text, "Unknown tool") {
				t.Fatalf("call while down -> %q", text)
			}
			return false
		}
		return fixture.ResultText(res) == "flaky:echo:{}"
	})
}
