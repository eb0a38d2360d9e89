package hub

// Shared test helpers: in-process fixture servers (real go-sdk servers over
// in-memory transports, plugged in through Options.Builtin), programmatic
// configs, and a recording client session.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// fixtureTool is one tool of an in-process fixture server. Schema is the
// JSON input schema, served verbatim.
type fixtureTool struct {
	Name        string
	Description string
	Schema      string
}

// fixtureCall is one call a fixture server received.
type fixtureCall struct {
	Server string // the builtin name
	Tool   string // the upstream (original) tool name
	Args   json.RawMessage
}

// fixtures makes in-process upstream servers for Options.Builtin: each
// builtin name maps to a list of tools, and every call is recorded. A
// handler answers with text "<server>.<tool> <arguments JSON>".
type fixtures struct {
	mu      sync.Mutex
	defs    map[string][]fixtureTool
	servers map[string]*mcp.Server // the latest server made for each builtin name
	calls   []fixtureCall
}

// The spec's fixtures (docs/search-tools.md, "Fixtures").
var (
	weatherTools = []fixtureTool{
		{"get_forecast", "Get weather forecast for a location.",
			`{"type":"object","properties":{"location":{"type":"string"},"units":{"type":"string","description":"celsius or fahrenheit"}},"required":["location"]}`},
		{"get_current", "Get current weather conditions.",
			`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`},
	}
	mathTools = []fixtureTool{
		{"add", "Add two numbers together.",
			`{"type":"object","properties":{"a":{"type":"number","description":"First number"},"b":{"type":"number"}},"required":["a","b"]}`},
		{"multiply", "Multiply two numbers together.",
			`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`},
	}
	clockTools = []fixtureTool{
		{"now", "Get the current time in a timezone.",
			`{"type":"object","properties":{"timezone":{"type":"string"}}}`},
	}
	searchServerTools = []fixtureTool{
		{"brave_web_search", "Search the web using Brave",
			`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`},
		{"brave_local_search", "Search local results using Brave",
			`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`},
	}
)

// bigTools returns n tools tool_0 .. tool_<n-1> "Tool number N on big server."
func bigTools(n int) []fixtureTool {
	out := make([]fixtureTool, n)
	for i := range out {
		out[i] = fixtureTool{fmt.Sprintf("tool_%d", i), fmt.Sprintf("Tool number %d on big server.", i), `{"type":"object"}`}
	}
	return out
}

// newFixtures returns fixtures with the spec's servers defined under their
// own names: weather, math, clock, search and bigserver.
func newFixtures() *fixtures {
	f := &fixtures{defs: map[string][]fixtureTool{}, servers: map[string]*mcp.Server{}}
	f.define("weather", weatherTools...)
	f.define("math", mathTools...)
	f.define("clock", clockTools...)
	f.define("search", searchServerTools...)
	f.define("bigserver", bigTools(12)...)
	return f
}

// define sets (or replaces) the tools of a builtin fixture server.
func (f *fixtures) define(name string, tools ...fixtureTool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.defs[name] = tools
}

// builtin is Options.Builtin.
func (f *fixtures) builtin(name string, env map[string]string) (*mcp.Server, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tools, ok := f.defs[name]
	if !ok {
		return nil, fmt.Errorf("no fixture server %q", name)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	for _, t := range tools {
		s.AddTool(t.def(), f.handler(name, t.Name))
	}
	f.servers[name] = s
	return s, nil
}

func (t fixtureTool) def() *mcp.Tool {
	return &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: json.RawMessage(t.Schema)}
}

func (f *fixtures) handler(server, tool string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := slices.Clone(req.Params.Arguments)
		f.mu.Lock()
		f.calls = append(f.calls, fixtureCall{Server: server, Tool: tool, Args: args})
		f.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: server + "." + tool + " " + string(args)}}}, nil
	}
}

// addTool adds a tool to a live fixture server (and to its definition, for
// reconnects). The server sends tools/list_changed to the hub.
func (f *fixtures) addTool(name string, t fixtureTool) {
	f.mu.Lock()
	f.defs[name] = append(slices.Clone(f.defs[name]), t)
	s := f.servers[name]
	f.mu.Unlock()
	s.AddTool(t.def(), f.handler(name, t.Name))
}

// removeTools removes tools from a live fixture server (and its definition).
func (f *fixtures) removeTools(name string, tools ...string) {
	f.mu.Lock()
	f.defs[name] = slices.DeleteFunc(slices.Clone(f.defs[name]), func(t fixtureTool) bool { return slices.Contains(tools, t.Name) })
	s := f.servers[name]
	f.mu.Unlock()
	s.RemoveTools(tools...)
}

// callsTo returns the calls a fixture server received for one tool ("" for all its tools).
func (f *fixtures) callsTo(server, tool string) []fixtureCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fixtureCall
	for _, c := range f.calls {
		if c.Server == server && (tool == "" || c.Tool == tool) {
			out = append(out, c)
		}
	}
	return out
}

// allCalls returns every call any fixture server received.
func (f *fixtures) allCalls() []fixtureCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// serverOpt adjusts one server entry of a test config.
type serverOpt func(*ServerConfig)

func deferLoading(b bool) serverOpt { return func(s *ServerConfig) { s.DeferLoading = &b } }
func withPrefix(p string) serverOpt { return func(s *ServerConfig) { s.Prefix = &p } }
func withDescription(d string) serverOpt {
	return func(s *ServerConfig) { s.Description = d }
}

// fixtureServer is a server entry named name that runs the fixture of the
// same name.
func fixtureServer(name string, opts ...serverOpt) *ServerConfig {
	s := &ServerConfig{Upstream: upstream.Config{Name: name, Builtin: name}}
	for _, o := range opts {
		o(s)
	}
	return s
}

// newTestConfig builds a Config programmatically, servers in the given order.
func newTestConfig(d Discovery, servers ...*ServerConfig) *Config {
	cfg := &Config{Path: "test.yaml", Servers: map[string]*ServerConfig{}, Discovery: d}
	for _, s := range servers {
		cfg.Servers[s.Name] = s
		cfg.ServerOrder = append(cfg.ServerOrder, s.Name)
	}
	return cfg
}

// smallConfig is the spec's SMALL fixture: weather and math deferred, clock
// eager, max_search_results 5.
func smallConfig() *Config {
	return newTestConfig(Discovery{Enabled: true, MaxSearchResults: 5},
		fixtureServer("weather", deferLoading(true)),
		fixtureServer("math", deferLoading(true)),
		fixtureServer("clock", deferLoading(false)))
}

// wideConfig is the spec's WIDE fixture: SMALL plus search (deferred).
func wideConfig() *Config {
	cfg := smallConfig()
	s := fixtureServer("search", deferLoading(true))
	cfg.Servers["search"] = s
	cfg.ServerOrder = append(cfg.ServerOrder, "search")
	return cfg
}

// bigConfig is the spec's BIG fixture: bigserver (deferred) with 12 tools.
func bigConfig(maxResults int) *Config {
	return newTestConfig(Discovery{Enabled: true, MaxSearchResults: maxResults},
		fixtureServer("bigserver", deferLoading(true)))
}

var quietLogger = slog.New(slog.DiscardHandler)

// newTestHub starts a hub on cfg with fixture servers; it is closed when the test ends.
func newTestHub(t testing.TB, cfg *Config, fx *fixtures) *Hub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := New(ctx, cfg, Options{Logger: quietLogger, StartupWait: 20 * time.Second, Builtin: fx.builtin})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// testClient is a go-sdk client session connected to a hub in memory. It
// counts the tools/list_changed notifications it receives.
type testClient struct {
	t            testing.TB
	h            *Hub
	cs           *mcp.ClientSession
	toolsChanged atomic.Int64
}

// connectClient opens a session on h for toolset ("" for all tools) and
// waits until the hub has registered it (so it receives list changes).
func connectClient(t testing.TB, h *Hub, toolset string) *testClient {
	t.Helper()
	c := &testClient{t: t, h: h}
	before := map[*Session]bool{}
	for _, s := range h.sessionList() {
		before[s] = true
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "test"}, &mcp.ClientOptions{
		Logger: quietLogger,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			c.toolsChanged.Add(1)
		},
	})
	cs, err := h.Connect(context.Background(), toolset, client)
	if err != nil {
		t.Fatalf("Connect(%q): %v", toolset, err)
	}
	c.cs = cs
	t.Cleanup(func() { cs.Close() })
	waitFor(t, "hub registers the session", func() bool {
		return slices.ContainsFunc(h.sessionList(), func(s *Session) bool { return !before[s] })
	})
	return c
}

// waitFor polls cond for up to 30 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	fixture.Eventually(t, 30*time.Second, what, cond)
}

// settle waits out the SDK's ~10 ms list_changed debounce and delivery.
func settle() { time.Sleep(100 * time.Millisecond) }

// listChanged waits until at least want tools/list_changed have arrived
// (up to 10 s: a loaded machine delivers late), then for the SDK's debounce
// window, so that one too many shows too, and returns how many arrived.
func (c *testClient) listChanged(want int64) int64 {
	deadline := time.Now().Add(10 * time.Second)
	for c.toolsChanged.Load() < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	settle()
	return c.toolsChanged.Load()
}

// call calls a tool; a protocol error fails the test.
func (c *testClient) call(name string, args any) *mcp.CallToolResult {
	c.t.Helper()
	res, err := c.callErr(name, args)
	if err != nil {
		c.t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// callErr calls a tool and returns the protocol error, if any.
func (c *testClient) callErr(name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// search calls search_tools and returns its text and isError.
func (c *testClient) search(args map[string]any) (string, bool) {
	c.t.Helper()
	res := c.call(SearchToolsName, args)
	return resultText(res), res.IsError
}

// tools lists the session's tools.
func (c *testClient) tools() []*mcp.Tool {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		c.t.Fatalf("tools/list: %v", err)
	}
	return res.Tools
}

// tool returns the listed tool of that name, or nil.
func (c *testClient) tool(name string) *mcp.Tool {
	c.t.Helper()
	for _, t := range c.tools() {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// toolNames lists the session's tool names, sorted.
// unchanged checks that the session still lists before and got no
// list_changed.
func (c *testClient) unchanged(t testing.TB, before []string) {
	t.Helper()
	if got := c.toolNames(); !slices.Equal(got, before) {
		t.Errorf("tools changed: %v -> %v", before, got)
	}
	if n := c.listChanged(0); n != 0 {
		t.Errorf("%d list_changed, want 0", n)
	}
}

func (c *testClient) toolNames() []string {
	c.t.Helper()
	var names []string
	for _, t := range c.tools() {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// resultText joins a result's text contents.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func sorted(names ...string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// rawMCPServer is a minimal hand-written MCP server over streamable HTTP
// (JSON responses, no session) that lists the given tools JSON verbatim:
// go-sdk servers refuse some schemas that real servers send.
func rawMCPServer(t *testing.T, tools string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				ProtocolVersion string          `json:"protocolVersion"`
				Name            string          `json:"name"`
				Arguments       json.RawMessage `json:"arguments"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result string
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":` + agJSON(t, req.Params.ProtocolVersion) + `,"capabilities":{"tools":{}},"serverInfo":{"name":"raw","version":"1"}}`
		case "tools/list":
			result = `{"tools":` + tools + `}`
		case "tools/call":
			result = `{"content":[{"type":"text","text":` + agJSON(t, req.Params.Name+":"+string(req.Params.Arguments)) + `}]}`
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, req.ID)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// testCtx bounds a test's calls; it ends with the test.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

type testSessionKey struct{}

// serveHTTP serves h over streamable HTTP at /mcp and /mcp/<toolset> the
// way package gateway does, without its guards and rewriting: a new
// Session for each POST without a session id (the SDK then refuses one
// that is not an initialize), routed by the SDK by its id afterwards.
func serveHTTP(h *Hub) http.Handler {
	shared := mcp.NewServer(&mcp.Implementation{Name: "mcp-hub", Version: "test"}, &mcp.ServerOptions{SupportedProtocolVersions: SupportedProtocolVersions()})
	stream := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s, ok := r.Context().Value(testSessionKey{}).(*Session); ok {
			return s.Server()
		}
		return shared
	}, nil)
	serve := func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" {
			stream.ServeHTTP(w, r)
			return
		}
		s, err := h.NewSession(SessionOptions{Toolset: r.PathValue("toolset")})
		if err != nil {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		stream.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), testSessionKey{}, s)))
		for ss := range s.Server().Sessions() {
			s.Watch(ss, nil)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", serve)
	mux.HandleFunc("/mcp/{toolset}", serve)
	return mux
}

// The "sec" helpers: fixture servers as real stdio processes, a hub on
// them, and raw HTTP clients.

// secConfig is a config with the given servers, in order, and fast restarts.
func secConfig(servers ...*ServerConfig) *Config {
	cfg := &Config{Path: "test.yaml", Servers: map[string]*ServerConfig{}}
	cfg.Restart.InitialBackoff = upstream.Duration(50 * time.Millisecond)
	cfg.Restart.MaxBackoff = upstream.Duration(200 * time.Millisecond)
	for _, sc := range servers {
		cfg.Servers[sc.Name] = sc
		cfg.ServerOrder = append(cfg.ServerOrder, sc.Name)
	}
	return cfg
}

func secStdio(t testing.TB, name string, args ...string) *ServerConfig {
	sc := &ServerConfig{Upstream: upstream.Config{Command: fixture.Build(t), Args: append([]string{"-name", name}, args...)}}
	sc.Name = name
	return sc
}

func secHub(t testing.TB, cfg *Config) (*Hub, *fixture.Log) {
	t.Helper()
	lg := &fixture.Log{}
	h, err := New(context.Background(), cfg, Options{Logger: slog.New(slog.NewTextHandler(lg, nil)), StartupWait: 20 * time.Second})
	if err != nil {
		t.Fatalf("hub: %v", err)
	}
	t.Cleanup(func() {
		h.Close()
		if t.Failed() {
			t.Logf("hub log:\n%s", lg.String())
		}
	})
	return h, lg
}

// secHeaderTransport adds headers to every request.
type secHeaderTransport map[string]string

func (h secHeaderTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func secHTTPClient(t testing.TB, url string, headers map[string]string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "sec-test", Version: "0"}, nil)
	cs, err := client.Connect(testCtx(t), &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: secHeaderTransport(headers)}, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

const secInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`

// secRawSession serves a hub for cfg over HTTP and opens a session on it for
// raw POSTs: the URL of /mcp and the headers that name the session.
func secRawSession(t testing.TB, cfg *Config) (url string, headers map[string]string) {
	t.Helper()
	h, _ := secHub(t, cfg)
	srv := httptest.NewServer(serveHTTP(h))
	t.Cleanup(srv.Close)
	cs, err := secHTTPClient(t, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL + "/mcp", map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": cs.InitializeResult().ProtocolVersion}
}

func secPost(t testing.TB, url, body string, headers map[string]string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
