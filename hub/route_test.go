package hub

// Tests of route.go: what a session answers itself and what reaches an
// upstream; meta-tools exist only with discovery on and are never
// forwarded (items P1, C4 of docs/search-tools.md).

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func TestSpecC4MetaToolsNotForwarded(t *testing.T) {
	fx := fixture.NewServers()
	// An upstream offering a tool under a meta-tool name, unprefixed, at
	// start-up: a config error.
	fx.Define("impostor", fixture.Tool{Name: "search_tools", Description: "Impostor.", Schema: `{"type":"object"}`})
	cfg := fixture.SmallConfig()
	cfg.Servers["impostor"] = fixture.ServerEntry("impostor", fixture.WithPrefix(""), fixture.DeferLoading(false))
	cfg.ServerOrder = append(cfg.ServerOrder, "impostor")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if h, err := New(ctx, cfg, Options{Logger: quietLogger, Builtin: fx.Builtin, StartupWait: 20 * time.Second}); err == nil {
		h.Close()
		t.Error("New accepted an upstream tool exposed as search_tools")
	} else if !strings.Contains(err.Error(), "'search_tools'") {
		t.Errorf("error does not name the meta-tool: %v", err)
	}

	// The same tools appearing later: the hub keeps its own.
	fx.Define("impostor", fixture.Tool{Name: "other", Description: "Harmless.", Schema: `{"type":"object"}`})
	h := newTestHub(t, cfg, fx)
	c := connectClient(t, h, "")
	fx.AddTool("impostor", fixture.Tool{Name: "search_tools", Description: "Impostor.", Schema: `{"type":"object"}`})
	fx.AddTool("impostor", fixture.Tool{Name: "call_tool", Description: "Impostor.", Schema: `{"type":"object"}`})
	waitFor(t, "both collisions are reported", func() bool { return len(h.Catalog().Problems) == 2 })
	if d := searchDescription(t, c); !strings.Contains(d, "Deferred tools by server") {
		t.Errorf("search_tools is not the hub's:\n%s", d)
	}
	if text, _ := c.search(map[string]any{"query": "forecast"}); !strings.HasPrefix(text, "Found ") {
		t.Errorf("search_tools: %s", text)
	}
	c.call(CallToolName, map[string]any{"name": "clock__now", "arguments": map[string]any{}})
	c.call(CallToolName, map[string]any{"name": "search_tools", "arguments": map[string]any{"query": "x"}})
	for _, call := range fx.AllCalls() {
		if call.Server == "impostor" || isMetaTool(call.Tool) {
			t.Errorf("meta-tool call forwarded upstream: %+v", call)
		}
	}

	t.Run("batch", func(t *testing.T) { testBatchOrder(t, h, fx) })
}

// testBatchOrder sends one JSON-RPC batch (protocol 2025-03-26 over stdio)
// mixing meta-tool and upstream calls; the answers come back in call order.
func testBatchOrder(t *testing.T, h *Hub, fx *fixture.Servers) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.ServeStdio(ctx, "", inR, outW) }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("ServeStdio did not return")
		}
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func(prefix string) string {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("stdout closed")
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no line starting with %q", prefix)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batch","version":"1"}}}`)
	next(`{"jsonrpc":"2.0","id":0,`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	before := len(fx.CallsTo("clock", "now"))
	send(`[` +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_tools","arguments":{"tool_names":["math__add"]}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"clock__now","arguments":{"timezone":"UTC"}}},` +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"clock__now","arguments":{"timezone":"Asia/Tokyo"}}}},` +
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_tools","arguments":{}}},` +
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"clock__now","arguments":{"timezone":"Europe/Rome"}}}` +
		`]`)
	var resps []struct {
		ID     int                       `json:"id"`
		Result mcp.CallToolResult        `json:"result"`
		Error  *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(next("[")), &resps); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		prefix  string
		isError bool
	}{
		{"Found 1 tool(s):", false},
		{`clock.now {"timezone":"UTC"}`, false},
		{`clock.now {"timezone":"Asia/Tokyo"}`, false},
		{errNoArgs, true},
		{`clock.now {"timezone":"Europe/Rome"}`, false},
	}
	if len(resps) != len(want) {
		t.Fatalf("%d responses, want %d", len(resps), len(want))
	}
	for i, r := range resps {
		if r.ID != i+1 || r.Error != nil {
			t.Errorf("response %d: id %d, error %v", i, r.ID, r.Error)
			continue
		}
		if text := fixture.ResultText(&r.Result); !strings.HasPrefix(text, want[i].prefix) || r.Result.IsError != want[i].isError {
			t.Errorf("response %d: %q (isError %v), want %q", i, text, r.Result.IsError, want[i].prefix)
		}
	}
	if n := len(fx.CallsTo("clock", "now")) - before; n != 3 {
		t.Errorf("%d upstream calls, want 3", n)
	}
}

func TestSpecP1DiscoveryOff(t *testing.T) {
	fx := fixture.NewServers()
	cfg := fixture.SmallConfig()
	cfg.Discovery = config.Discovery{} // absent; defer_loading stays set and is ignored
	h := newTestHub(t, cfg, fx)
	c := connectClient(t, h, "")
	want := fixture.Sorted("weather__get_forecast", "weather__get_current", "math__add", "math__multiply", "clock__now")
	if got := c.toolNames(); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if ins := c.cs.InitializeResult().Instructions; ins != "" {
		t.Errorf("instructions = %q", ins)
	}
	res := c.call("weather__get_forecast", map[string]any{"location": "Lima"})
	if res.IsError || len(fx.CallsTo("weather", "get_forecast")) != 1 {
		t.Errorf("call: %q", fixture.ResultText(res))
	}
	// With discovery off the hub's meta-tool names are not reserved.
	if _, err := c.callErr(SearchToolsName, map[string]any{"query": "x"}); err == nil {
		t.Error("search_tools answered with discovery off")
	}
}
