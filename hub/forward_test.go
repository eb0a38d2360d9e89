package hub

// Tests of forward.go: direct calls to a deferred tool, refused before it
// is loaded and forwarded after, or loaded on the call with
// auto_load_on_call (items C1, C2 of docs/search-tools.md).

import (
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
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
