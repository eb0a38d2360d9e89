package hub

// Fuzz targets for the hub's input paths (issue 6, "Bad input from
// clients"): the config loader, and the argument handling of the
// search_tools and call_tool meta-tools of a real session.
//
//	go test -run '^$' -fuzz '^FuzzParseConfig$' -fuzztime 20s ./hub
//	scripts/fuzz.sh runs every target of the repository in turn.
//
// Seed corpora: f.Add below, and testdata/fuzz/FuzzXxx/.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// FuzzSearchToolsArgs: any bytes as search_tools arguments give a result
// (often isError) and never a panic, both from the handler itself and over
// a real client session (for bytes that are valid JSON).
func FuzzSearchToolsArgs(f *testing.F) {
	for _, seed := range []string{
		`{"query":"weather forecast"}`,
		`{"query":"add numbers","server_name":"math"}`,
		`{"server_name":"weather"}`,
		`{"server_name":""}`,
		`{"server_name":"nope"}`,
		`{"tool_names":["math__add","weather__get_forcast","x"]}`,
		`{"tool_names":[]}`,
		`{"tool_names":"math__add"}`,
		`{"query":5}`,
		`{"query":"   "}`,
		`{}`,
		`null`,
		`[]`,
		`"query"`,
		`{"query":"\u0000\ud800"}`,
		`{"query":"ünïcödé 天気 🌧"}`,
		`{"queries":["weather forecast","add numbers"]}`,
		`{"query":"weather","queries":["add","   ",""]}`,
		`{"queries":["a","b","c","d","e","f","g","h","i","j","k"]}`,
		`{"queries":"weather"}`,
		`{"queries":[5,null]}`,
		`{"queries":[],"server_name":"math"}`,
		``,
		`{`,
	} {
		f.Add([]byte(seed))
	}
	fz := fzNewHub(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fz.check(t, SearchToolsName, data)
	})
}

// FuzzCallToolArgs: the same for call_tool, whose arguments name a tool and
// carry its arguments (an object, or a JSON string of one).
func FuzzCallToolArgs(f *testing.F) {
	for _, seed := range []string{
		`{"name":"math__add","arguments":{"a":1,"b":2}}`,
		`{"name":"math__add","arguments":"{\"a\":1,\"b\":2}"}`,
		`{"name":"math__add","arguments":"not json"}`,
		`{"name":"math__add","arguments":"\"str\""}`,
		`{"name":"math__add","arguments":null}`,
		`{"name":"math__add","arguments":[1,2]}`,
		`{"name":"math__add"}`,
		`{"name":"clock__now","arguments":{}}`,
		`{"name":"weather__get_forecast","arguments":{"location":"Paris"}}`,
		`{"name":"weather__get_forcast"}`,
		`{"name":"search_tools","arguments":{"query":"x"}}`,
		`{"name":"call_tool","arguments":{"name":"call_tool"}}`,
		`{"name":""}`,
		`{"name":5}`,
		`{"arguments":{}}`,
		`{}`,
		`null`,
		`"math__add"`,
		``,
		`{"name":"math__add","arguments":{"a":1e999}}`,
	} {
		f.Add([]byte(seed))
	}
	fz := fzNewHub(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		fz.check(t, CallToolName, data)
	})
}

// fzHub is a hub over in-process fixture servers, with one long-lived
// client session for the whole fuzzing run.
type fzHub struct {
	h       *Hub
	session *Session           // the hub side of cs
	cs      *mcp.ClientSession // a real client session over the in-memory transport
}

// fzNewHub starts a hub with discovery on: weather and math deferred,
// clock eager. Each fuzz worker makes its own.
func fzNewHub(f testing.TB) *fzHub {
	f.Helper()
	tools := map[string][][3]string{ // server -> {name, description, schema}
		"weather": {
			{"get_forecast", "Get weather forecast for a location.", `{"type":"object","properties":{"location":{"type":"string"},"units":{"type":"string","description":"celsius or fahrenheit"}},"required":["location"]}`},
			{"get_current", "Get current weather conditions.", `{"type":"object","properties":{"location":{"type":"string"}}}`},
		},
		"math": {
			{"add", "Add two numbers together.", `{"type":"object","properties":{"a":{"type":"number","description":"First number"},"b":{"type":"number"}},"required":["a","b"]}`},
			{"multiply", "Multiply two numbers together.", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`},
		},
		"clock": {
			{"now", "Get the current time in a timezone.", `{"type":"object","properties":{"timezone":{"type":"string"}}}`},
		},
	}
	builtin := func(name string, _ map[string]string) (*mcp.Server, error) {
		defs, ok := tools[name]
		if !ok {
			return nil, fmt.Errorf("no fuzz fixture %q", name)
		}
		s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "fuzz"}, nil)
		for _, d := range defs {
			tool := d[0]
			s.AddTool(&mcp.Tool{Name: tool, Description: d[1], InputSchema: json.RawMessage(d[2])},
				func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + "." + tool + " " + string(req.Params.Arguments)}}}, nil
				})
		}
		return s, nil
	}
	yes, no := true, false
	cfg := &config.Config{Path: "fuzz.yaml", Servers: map[string]*config.Server{},
		Discovery: config.Discovery{Enabled: true, MaxSearchResults: 3}}
	for _, srv := range []struct {
		name     string
		deferred *bool
	}{{"weather", &yes}, {"math", &yes}, {"clock", &no}} {
		sc := &config.Server{Upstream: config.Upstream{Name: srv.name, Builtin: srv.name}, DeferLoading: srv.deferred}
		cfg.Servers[srv.name] = sc
		cfg.ServerOrder = append(cfg.ServerOrder, srv.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// A state folder of its own: its servers share names with the other
	// tests' but not their definitions, which pins would hold back.
	h, err := New(ctx, cfg, Options{Logger: slog.New(slog.DiscardHandler), StartupWait: 30 * time.Second, Builtin: builtin, StateDir: f.TempDir()})
	if err != nil {
		f.Fatalf("New: %v", err)
	}
	f.Cleanup(func() { h.Close() })
	if n := len(h.Catalog().Tools); n != 5 {
		f.Fatalf("catalog has %d tools, want 5: %v", n, h.Upstreams())
	}
	s, err := h.NewSession(SessionOptions{})
	if err != nil {
		f.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.connect(ctx, st); err != nil {
		f.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "fuzz", Version: "0"}, &mcp.ClientOptions{Logger: slog.New(slog.DiscardHandler)})
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { cs.Close() })
	return &fzHub{h: h, session: s, cs: cs}
}

// check sends data as the arguments of meta-tool tool, twice: straight to
// the handler of a fresh session (any bytes at all), and over the real
// client session (bytes that are valid JSON; others cannot be sent).
func (fz *fzHub) check(t *testing.T, tool string, data []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// 1. The handler, on a session of its own so that what one input
	// loads does not hide the "not loaded" paths from the next.
	s, err := fz.h.NewSession(SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool, Arguments: json.RawMessage(data)}}
	raw, err := s.callListed(ctx, req)
	var res *mcp.CallToolResult
	if err == nil {
		res = fixture.Result(t, raw)
	}
	fzCheckOutcome(t, "handler", tool, data, res, err)
	if ctx.Err() != nil {
		t.Fatalf("handler: %s(%q) did not answer within 10s", tool, data)
	}

	// 2. The real session: JSON-RPC framing, the SDK's own checks, and
	// list_changed after a load.
	if !json.Valid(data) {
		return
	}
	res, err = fz.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(data)})
	fzCheckOutcome(t, "session", tool, data, res, err)
	if ctx.Err() != nil {
		t.Fatalf("session: %s(%q) did not answer within 10s", tool, data)
	}
	// The session survives whatever it was sent.
	if err := fz.cs.Ping(ctx, nil); err != nil {
		t.Fatalf("session: ping after %s(%q): %v", tool, data, err)
	}
}

// fzCheckOutcome: a result with content, or a JSON-RPC error; nothing else.
func fzCheckOutcome(t *testing.T, via, tool string, data []byte, res *mcp.CallToolResult, err error) {
	t.Helper()
	if err != nil {
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) {
			t.Fatalf("%s: %s(%q): error is %T, not a JSON-RPC error: %v", via, tool, data, err, err)
		}
		return
	}
	if res == nil {
		t.Fatalf("%s: %s(%q): nil result and nil error", via, tool, data)
	}
	if len(res.Content) == 0 {
		t.Fatalf("%s: %s(%q): result without content", via, tool, data)
	}
}

// TestMetaToolsBigArguments: what the fuzzers' small inputs cannot reach.
// A client may send up to max_request_bytes (4 MiB) of arguments; the work
// they cause must stay linear in their size. Before the fix, 40,000
// tool_names (1 MiB) took 8 s (quadratic de-duplication, and suggestions
// for every missing name) and a 4 MiB tool name 1.6 s of edit distances
// per five catalog tools.
func TestMetaToolsBigArguments(t *testing.T) {
	t.Parallel()
	fz := fzNewHub(t)
	names := make([]string, 100_000)
	for i := range names {
		names[i] = fmt.Sprintf("weather__get_thing_%d", i)
	}
	names = append(names, "math__add", "math__ad")
	bigNames, _ := json.Marshal(map[string]any{"tool_names": names})
	bigName, _ := json.Marshal(map[string]any{"name": strings.Repeat("get_thing ", 400_000)})
	for _, tc := range []struct {
		tool string
		args []byte
		want string
	}{
		{SearchToolsName, bigNames, "math__add"},
		{CallToolName, bigName, "Unknown tool"},
	} {
		s, err := fz.h.NewSession(SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := s.callListed(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tc.tool, Arguments: tc.args}})
		took := time.Since(start)
		if err != nil || res == nil {
			t.Fatalf("%s with %d KiB of arguments: %v", tc.tool, len(tc.args)>>10, err)
		}
		if text := fixture.ResultText(fixture.Result(t, res)); !strings.Contains(text, tc.want) {
			t.Errorf("%s: result does not mention %q: %.200s", tc.tool, tc.want, text)
		}
		// Generous for -race on a loaded machine; the quadratic versions
		// took minutes here.
		if took > 10*time.Second {
			t.Errorf("%s with %d KiB of arguments took %s", tc.tool, len(tc.args)>>10, took)
		}
		t.Logf("%s with %d KiB of arguments: %s", tc.tool, len(tc.args)>>10, took)
	}
}
