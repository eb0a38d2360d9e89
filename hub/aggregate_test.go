package hub

// Aggregation tests with real upstreams: in-process go-sdk servers (the
// Builtin hook, in-memory transports), the stdio fixture subprocess
// (testdata/fixture), and HTTP upstreams on 127.0.0.1 (streamable HTTP and
// SSE). Helpers here are prefixed "ag" so they never clash with other test
// files of the package.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// agUp is one upstream of a test hub.
type agUp struct {
	name   string
	cfg    config.Upstream
	prefix *string
	allow  []string
	deny   []string
}

func agPrefix(s string) *string { return &s }

// agConfig builds a Config directly (builtin names used by tests are not
// the shipped ones, so the file loader's validation is bypassed here; the
// loader has its own tests below).
func agConfig(ups ...agUp) *config.Config {
	cfg := &config.Config{Path: "test.yaml", Servers: map[string]*config.Server{}}
	cfg.Restart.InitialBackoff = config.Duration(100 * time.Millisecond)
	cfg.Restart.MaxBackoff = config.Duration(time.Second)
	for _, u := range ups {
		sc := &config.Server{Upstream: u.cfg, Prefix: u.prefix, Tools: config.ToolFilter{Allow: u.allow, Deny: u.deny}}
		sc.Name = u.name
		cfg.Servers[u.name] = sc
		cfg.ServerOrder = append(cfg.ServerOrder, u.name)
	}
	return cfg
}

// agBuiltins makes an Options.Builtin hook serving the given in-process
// servers by builtin name. Each connect gets a fresh server.
func agBuiltins(servers map[string]func() *mcp.Server) func(string, map[string]string) (*mcp.Server, error) {
	return func(name string, _ map[string]string) (*mcp.Server, error) {
		mk, ok := servers[name]
		if !ok {
			return nil, fmt.Errorf("no test builtin %q", name)
		}
		return mk(), nil
	}
}

// agHub starts a hub; it is closed when the test ends.
func agHub(t *testing.T, cfg *config.Config, opts Options) (*Hub, *fixture.Log) {
	t.Helper()
	h, log, err := agNew(t, cfg, opts)
	if err != nil {
		t.Fatalf("hub.New: %v", err)
	}
	return h, log
}

func agNew(t *testing.T, cfg *config.Config, opts Options) (*Hub, *fixture.Log, error) {
	t.Helper()
	log := fixture.NewLog(t)
	opts.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.StartupWait == 0 {
		opts.StartupWait = 20 * time.Second
	}
	h, err := New(fixture.Context(t), cfg, opts)
	if err == nil {
		t.Cleanup(func() { h.Close() })
	}
	return h, log, err
}

// agClient connects a downstream client to h over the in-memory transport.
func agClient(t *testing.T, h *Hub, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return agClientWith(t, h, mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "0"}, opts))
}

func agClientWith(t *testing.T, h *Hub, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	cs, err := h.Connect(fixture.Context(t), "", client)
	if err != nil {
		t.Fatalf("connect to hub: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// agSessionTransport opens a session of h (default options) on the
// in-memory transport and returns the client's end, for a client that
// h.Connect does not fit (it pins the legacy era).
func agSessionTransport(t *testing.T, h *Hub) mcp.Transport {
	t.Helper()
	s, err := h.NewSession(SessionOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.connect(fixture.Context(t), st); err != nil {
		t.Fatal(err)
	}
	return ct
}

// agHTTPClient connects a downstream client to h over streamable HTTP.
func agHTTPClient(t *testing.T, h *Hub, client *mcp.Client) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(serveHTTP(h))
	t.Cleanup(srv.Close)
	cs, err := client.Connect(fixture.Context(t), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect to hub over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// agEchoServer is an in-process server whose tools answer "server:tool:args".
func agEchoServer(name string, tools ...string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, nil)
	for _, tool := range tools {
		s.AddTool(&mcp.Tool{Name: tool, Description: "echo " + tool + " of " + name, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := string(req.Params.Arguments)
				if args == "" || args == "null" {
					args = "{}"
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + ":" + tool + ":" + args}}}, nil
			})
	}
	return s
}

// agServeSSE serves s over the 2024-11-05 SSE transport and returns the endpoint.
func agServeSSE(t *testing.T, s *mcp.Server) string {
	t.Helper()
	srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

func agStdio(t testing.TB, args ...string) config.Upstream {
	return config.Upstream{Command: fixture.Build(t), Args: args}
}

func agToolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(fixture.Context(t), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func agCall(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// agSameJSON compares two JSON values structurally.
func agSameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	norm := func(v any) string {
		var x any
		if err := json.Unmarshal([]byte(fixture.JSON(t, v)), &x); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return fixture.JSON(t, x)
	}
	if g, w := norm(got), norm(want); g != w {
		t.Errorf("%s differs:\n got: %s\nwant: %s", what, g, w)
	}
}

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

// TestNamingPrefixes covers the default prefix, a custom one, prefix "",
// sanitising, and the 64-character rule with a stable hash suffix: cut
// names stay distinct and callable.
func TestNamingPrefixes(t *testing.T) {
	long1 := strings.Repeat("very_long_tool_name_", 4) + "one"
	long2 := strings.Repeat("very_long_tool_name_", 4) + "two"
	cfg := agConfig(
		agUp{name: "alpha", cfg: config.Upstream{Builtin: "alpha"}},
		agUp{name: "beta", cfg: config.Upstream{Builtin: "beta"}, prefix: agPrefix("b")},
		agUp{name: "gamma", cfg: config.Upstream{Builtin: "gamma"}, prefix: agPrefix("")},
	)
	h, _ := agHub(t, cfg, Options{Builtin: agBuiltins(map[string]func() *mcp.Server{
		"alpha": func() *mcp.Server { return agEchoServer("alpha", "search", "dotted.name", long1, long2) },
		"beta":  func() *mcp.Server { return agEchoServer("beta", "search") },
		"gamma": func() *mcp.Server { return agEchoServer("gamma", "plain") },
	})})
	cs := agClient(t, h, nil)
	cut1, cut2 := ExposedName("alpha", long1), ExposedName("alpha", long2)
	want := []string{"alpha__dotted_name", "alpha__search", "b__search", "plain", cut1, cut2}
	slices.Sort(want)
	if got := agToolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v, want %v", got, want)
	}
	for _, cut := range []string{cut1, cut2} {
		if len(cut) != config.MaxNameLength {
			t.Errorf("%s: %d characters, want %d", cut, len(cut), config.MaxNameLength)
		}
		if !strings.HasPrefix(cut, "alpha__very_long_tool_name_") {
			t.Errorf("%s does not keep the start of the name", cut)
		}
	}
	if cut1 == cut2 {
		t.Fatalf("two long names share an exposed name %s", cut1)
	}
	if again := ExposedName("alpha", long1); again != cut1 {
		t.Errorf("ExposedName is not stable: %s then %s", cut1, again)
	}
	// Calls go to the original names.
	for name, text := range map[string]string{
		cut1:                 "alpha:" + long1 + ":{}",
		cut2:                 "alpha:" + long2 + ":{}",
		"alpha__dotted_name": "alpha:dotted.name:{}",
		"b__search":          "beta:search:{}",
		"plain":              "gamma:plain:{}",
	} {
		if got := fixture.ResultText(agCall(t, cs, name, nil)); got != text {
			t.Errorf("%s -> %q, want %q", name, got, text)
		}
	}
	tool, ok := h.Catalog().Tool(cut1)
	if !ok || tool.Server != "alpha" || tool.Original != long1 {
		t.Errorf("catalog entry for %s = %+v", cut1, tool)
	}
	// The chat's stats ask the hub, not the name, which server a tool is from.
	for name, want := range map[string]string{"b__search": "beta", "plain": "gamma", cut2: "alpha", "nope": ""} {
		if got, ok := h.ServerOf(name); got != want || ok != (want != "") {
			t.Errorf("ServerOf(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func TestExposedName(t *testing.T) {
	for _, tc := range []struct{ prefix, name, want string }{
		{"github", "create_issue", "github__create_issue"},
		{"", "create_issue", "create_issue"},
		{"my server", "a.b/c:d", "my_server__a_b_c_d"},
		{"x", "ünï", "x___n_"},
	} {
		if got := ExposedName(tc.prefix, tc.name); got != tc.want {
			t.Errorf("ExposedName(%q, %q) = %q, want %q", tc.prefix, tc.name, got, tc.want)
		}
	}
	exact := strings.Repeat("a", config.MaxNameLength-len("p__"))
	if got := ExposedName("p", exact); got != "p__"+exact {
		t.Errorf("a name of exactly 64 characters was changed: %s", got)
	}
	over := ExposedName("p", exact+"b")
	if len(over) != config.MaxNameLength || over == "p__"+exact[:len(exact)-1] {
		t.Errorf("65 characters -> %q", over)
	}
	for _, c := range over {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == 'p') {
			t.Errorf("%q has character %q", over, c)
		}
	}
}

// TestCollisionAtStartup: two servers exposing the same name when the hub
// starts is a startup error naming both servers and the fix.
func TestCollisionAtStartup(t *testing.T) {
	cfg := agConfig(
		agUp{name: "one", cfg: config.Upstream{Builtin: "one"}, prefix: agPrefix("")},
		agUp{name: "two", cfg: agStdio(t, "-name", "two", "-tools", "search,other"), prefix: agPrefix("")},
	)
	_, _, err := agNew(t, cfg, Options{Builtin: agBuiltins(map[string]func() *mcp.Server{
		"one": func() *mcp.Server { return agEchoServer("one", "search") },
	})})
	if err == nil {
		t.Fatal("hub.New accepted a tool name collision")
	}
	msg := err.Error()
	for _, want := range []string{"'search'", "server 'one'", "server 'two'", "prefix"} {
		if !strings.Contains(msg, want) {
			t.Errorf("collision error %q does not mention %s", msg, want)
		}
	}
	if _, ok := err.(*config.Error); !ok {
		t.Errorf("collision error is %T, want *ConfigError (exit code 2)", err)
	}
	// Denying one of them resolves it.
	cfg.Servers["two"].Tools.Deny = []string{"search"}
	h, _, err := agNew(t, cfg, Options{Builtin: agBuiltins(map[string]func() *mcp.Server{
		"one": func() *mcp.Server { return agEchoServer("one", "search") },
	})})
	if err != nil {
		t.Fatalf("with the deny: %v", err)
	}
	if got := h.Catalog().Names(); !slices.Equal(got, []string{"search", "other"}) {
		t.Errorf("catalog = %v", got)
	}
}

// TestCollisionLater: a collision that appears after start-up (a server
// adds a tool) is logged and reported; the first server keeps the name.
func TestCollisionLater(t *testing.T) {
	t.Parallel()
	cfg := agConfig(
		agUp{name: "one", cfg: config.Upstream{Builtin: "one"}, prefix: agPrefix("")},
		agUp{name: "two", cfg: agStdio(t, "-name", "two", "-tools", "other", "-add-tool-after", "300ms", "-add-tool", "search"), prefix: agPrefix("")},
	)
	h, log := agHub(t, cfg, Options{Builtin: agBuiltins(map[string]func() *mcp.Server{
		"one": func() *mcp.Server { return agEchoServer("one", "search") },
	})})
	cs := agClient(t, h, nil)
	log.WaitFor(t, "the collision to be logged", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "collision") && strings.Contains(s, "server 'two'")
	})
	// The catalog is published just after its problems are logged.
	waitFor(t, "the collision in the catalog's problems", func() bool {
		p := h.Catalog().Problems
		return len(p) > 0 && strings.Contains(p[0], "server 'one'")
	})
	if got := fixture.ResultText(agCall(t, cs, "search", nil)); got != "one:search:{}" {
		t.Errorf("search -> %q, want the first server's", got)
	}
	if got := agToolNames(t, cs); !slices.Equal(got, []string{"other", "search"}) {
		t.Errorf("tools/list = %v", got)
	}
}

// TestCollisionLateJoiner: a server that joins late never takes over a
// name clients already call, even if it comes first in the config.
func TestCollisionLateJoiner(t *testing.T) {
	t.Parallel()
	cfg := agConfig(
		agUp{name: "late", cfg: agStdio(t, "-name", "late", "-tools", "search,extra", "-start-delay", "3s"), prefix: agPrefix("")},
		agUp{name: "early", cfg: config.Upstream{Builtin: "early"}, prefix: agPrefix("")},
	)
	h, log := agHub(t, cfg, Options{StartupWait: 200 * time.Millisecond, Builtin: agBuiltins(map[string]func() *mcp.Server{
		"early": func() *mcp.Server { return agEchoServer("early", "search") },
	})})
	// Under load the in-process server may miss the 200ms start-up wait
	// too: the call below needs it listed, the late one still starting
	// (its 3s start delay is the margin).
	fixture.Eventually(t, 10*time.Second, "the early server's tool", func() bool {
		return slices.Contains(h.Catalog().Names(), "search")
	})
	cs := agClient(t, h, nil)
	if got := fixture.ResultText(agCall(t, cs, "search", nil)); got != "early:search:{}" {
		t.Fatalf("search -> %q", got)
	}
	log.WaitFor(t, "the late collision", 15*time.Second, func(s string) bool { return strings.Contains(s, "tool name collision") })
	fixture.Eventually(t, 30*time.Second, "the late server's other tool", func() bool {
		return slices.Equal(agToolNames(t, cs), []string{"extra", "search"})
	})
	if got := fixture.ResultText(agCall(t, cs, "search", nil)); got != "early:search:{}" {
		t.Errorf("search -> %q after the late server joined; the name moved", got)
	}
	// Listing order is still config order.
	if got := h.Catalog().Names(); !slices.Equal(got, []string{"extra", "search"}) {
		t.Errorf("catalog order = %v", got)
	}
}

// TestFilters applies allow and deny lists (globs allowed) by original name.
func TestFilters(t *testing.T) {
	mk := func() *mcp.Server {
		return agEchoServer("s", "read_file", "write_file", "delete_file", "list_dir", "stat")
	}
	cfg := agConfig(
		agUp{name: "allow", cfg: config.Upstream{Builtin: "s"}, allow: []string{"read_*", "list_dir", "stat"}},
		agUp{name: "deny", cfg: config.Upstream{Builtin: "s"}, deny: []string{"delete_file", "write_*"}},
		agUp{name: "both", cfg: config.Upstream{Builtin: "s"}, allow: []string{"*_file"}, deny: []string{"delete_file"}},
	)
	h, _ := agHub(t, cfg, Options{Builtin: agBuiltins(map[string]func() *mcp.Server{"s": mk})})
	cs := agClient(t, h, nil)
	want := []string{
		"allow__list_dir", "allow__read_file", "allow__stat",
		"both__read_file", "both__write_file",
		"deny__list_dir", "deny__read_file", "deny__stat",
	}
	if got := agToolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v, want %v", got, want)
	}
	// A filtered tool cannot be called either.
	_, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "deny__delete_file"})
	if err == nil || !strings.Contains(err.Error(), "Unknown tool 'deny__delete_file'") {
		t.Errorf("call of a denied tool: %v", err)
	}
}

// TestFailingServer: a server that cannot start is reported and retried;
// the hub serves the others, and a call to the failing server's tools gets
// a retryable error, not "unknown tool". A failing server without a prefix
// cannot be recognised in a name: "unknown tool" says it may be one of its.
func TestFailingServer(t *testing.T) {
	cfg := agConfig(
		agUp{name: "good", cfg: agStdio(t, "-name", "good", "-tools", "echo")},
		agUp{name: "bad", cfg: agStdio(t, "-name", "bad", "-fail-start")},
		agUp{name: "missing", cfg: config.Upstream{Command: "/nonexistent/mcp-server"}},
		agUp{name: "bare", cfg: agStdio(t, "-name", "bare", "-fail-start"), prefix: agPrefix("")},
	)
	h, log := agHub(t, cfg, Options{})
	cs := agClient(t, h, nil)
	if got := agToolNames(t, cs); !slices.Equal(got, []string{"good__echo"}) {
		t.Fatalf("tools/list = %v", got)
	}
	if got := fixture.ResultText(agCall(t, cs, "good__echo", nil)); got != "good:echo:{}" {
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
	cfg := agConfig(agUp{name: "flaky", cfg: agStdio(t, "-name", "flaky", "-tools", "echo", "-crash-after", "1")})
	h, _ := agHub(t, cfg, Options{})
	cs := agClient(t, h, nil)
	if got := fixture.ResultText(agCall(t, cs, "flaky__echo", nil)); got != "flaky:echo:{}" {
		t.Fatalf("first call -> %q", got)
	}
	fixture.Eventually(t, 10*time.Second, "the crash to be noticed", func() bool {
		return h.Upstreams()[0].Restarts > 0
	})
	// Until it is back, calls fail with a retryable error; afterwards they work.
	fixture.Eventually(t, 15*time.Second, "the server to come back", func() bool {
		res := agCall(t, cs, "flaky__echo", nil)
		if res.IsError {
			if text := fixture.ResultText(res); !strings.Contains(text, "retry") || strings.Contains(text, "Unknown tool") {
				t.Fatalf("call while down -> %q", text)
			}
			return false
		}
		return fixture.ResultText(res) == "flaky:echo:{}"
	})
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

// TestVerbatimSchemas: input and output schemas ($defs/$ref, draft 2020-12
// keywords), annotations, title, icons and _meta reach the client exactly as
// the upstream sent them; only the name changes.
func TestVerbatimSchemas(t *testing.T) {
	input := `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id": "urn:test:create",
		"type": "object",
		"$defs": {
			"label": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
			"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false}
		},
		"properties": {
			"title": {"type": "string", "description": "Issue title", "default": "untitled"},
			"labels": {"type": "array", "items": {"$ref": "#/$defs/label"}, "uniqueItems": true, "maxItems": 5},
			"at": {"$ref": "#/$defs/point"},
			"kind": {"enum": ["bug", "feature"], "const": "bug"},
			"nested": {"type": ["object", "null"], "unevaluatedProperties": false,
				"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}},
				"properties": {"a": {"type": "integer"}, "b": {"type": "integer", "exclusiveMinimum": 0}}},
			"choice": {"oneOf": [{"type": "string", "format": "email"}, {"type": "integer", "multipleOf": 3}]},
			"cond": {"if": {"type": "string"}, "then": {"maxLength": 3}, "else": {"type": "number"}},
			"big": {"type": "number", "examples": [1, 2.5], "x-custom": {"keep": true}}
		},
		"required": ["title"],
		"additionalProperties": false,
		"patternProperties": {"^x-": {"type": "string"}},
		"propertyNames": {"maxLength": 20}
	}`
	output := `{"type":"object","properties":{"id":{"type":"integer"},"url":{"type":"string","format":"uri"}},"required":["id"],"$defs":{"unused":{"type":"null"}}}`
	ro, destructive := true, false
	mk := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "schemas", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{
			Name:         "create",
			Title:        "Create an issue",
			Description:  "Create an issue.",
			InputSchema:  json.RawMessage(input),
			OutputSchema: json.RawMessage(output),
			Annotations:  &mcp.ToolAnnotations{Title: "Create", ReadOnlyHint: ro, DestructiveHint: &destructive, IdempotentHint: true},
			Meta:         mcp.Meta{"vendor/x": map[string]any{"a": 1}, "ui": "compact"},
			Icons:        []mcp.Icon{{Source: "https://example.com/i.png", MIMEType: "image/png"}},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"id": 7}, Content: []mcp.Content{&mcp.TextContent{Text: `{"id":7}`}}}, nil
		})
		return s
	}
	// The stdio fixture passes the same input schema through -schema-file.
	schemaFile := filepath.Join(t.TempDir(), "schemas.json")
	if err := os.WriteFile(schemaFile, []byte(`{"create":`+input+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	httpURL := fixture.ServeHTTP(t, mk())
	cfg := agConfig(
		agUp{name: "mem", cfg: config.Upstream{Builtin: "schemas"}},
		agUp{name: "web", cfg: config.Upstream{URL: httpURL}},
		agUp{name: "proc", cfg: agStdio(t, "-name", "proc", "-tools", "create", "-schema-file", schemaFile)},
	)
	h, _ := agHub(t, cfg, Options{Builtin: agBuiltins(map[string]func() *mcp.Server{"schemas": mk})})
	cs := agClient(t, h, nil)
	res, err := cs.ListTools(fixture.Context(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	// What the upstream itself lists, straight from it.
	ct, st := mcp.NewInMemoryTransports()
	direct := mk()
	if _, err := direct.Connect(fixture.Context(t), st, nil); err != nil {
		t.Fatal(err)
	}
	dcs, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "0"}, nil).Connect(fixture.Context(t), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dcs.Close()
	dres, err := dcs.ListTools(fixture.Context(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := dres.Tools[0]
	for _, name := range []string{"mem__create", "web__create"} {
		tool := got[name]
		if tool == nil {
			t.Fatalf("%s not listed; got %v", name, agToolNames(t, cs))
		}
		copy := *tool
		copy.Name = want.Name
		agSameJSON(t, name+" definition", &copy, want)
	}
	agSameJSON(t, "proc__create inputSchema", got["proc__create"].InputSchema, json.RawMessage(input))
	// Structured output still validates against the verbatim output schema.
	out := agCall(t, cs, "mem__create", map[string]any{"title": "x"})
	agSameJSON(t, "structuredContent", out.StructuredContent, map[string]any{"id": 7})
}

// TestToolTypePatched: a schema whose top-level type is not exactly
// "object" (which the SDK refuses to serve) is served with type "object"
// and otherwise unchanged, rather than dropped or crashing the session.
func TestToolTypePatched(t *testing.T) {
	url := fixture.RawMCPServer(t, `[
		{"name":"notype","inputSchema":{"properties":{"a":{"type":"string"}}}},
		{"name":"nullable","inputSchema":{"type":["object","null"],"properties":{"b":{"type":"integer"}}}},
		{"name":"fine","inputSchema":{"type":"object","properties":{"c":{"type":"boolean"}},"x-extra":[1,2]}}
	]`)
	h, _ := agHub(t, agConfig(agUp{name: "raw", cfg: config.Upstream{URL: url}}), Options{})
	cs := agClient(t, h, nil)
	res, err := cs.ListTools(fixture.Context(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range res.Tools {
		got[tool.Name] = fixture.JSON(t, tool.InputSchema)
	}
	want := map[string]string{
		"raw__notype":   `{"properties":{"a":{"type":"string"}},"type":"object"}`,
		"raw__nullable": `{"properties":{"b":{"type":"integer"}},"type":"object"}`,
		"raw__fine":     `{"properties":{"c":{"type":"boolean"}},"type":"object","x-extra":[1,2]}`,
	}
	if len(got) != len(want) {
		t.Fatalf("tools/list = %v", got)
	}
	for name, w := range want {
		agSameJSON(t, name, json.RawMessage(got[name]), json.RawMessage(w))
	}
	if text := fixture.ResultText(agCall(t, cs, "raw__nullable", map[string]any{"b": 1})); text != `nullable:{"b":1}` {
		t.Errorf("raw__nullable -> %q", text)
	}
}

// TestNameLimit: with max_name_length (Cursor's 60 less its entry name, or
// any limit in range), or serve's override, every name a client sees (tools,
// prompts, meta-tools) fits, the cut names are the same on the next start,
// and calls still reach the original tools.
func TestNameLimit(t *testing.T) {
	t.Parallel()
	const server = "a-rather-long-server-name"
	tools := []string{
		"short",
		strings.Repeat("x", 30),
		"create_or_update_file_contents_in_repository",
		"create_or_update_file_contents_in_repository_branch",
		strings.Repeat("very_long_tool_name_", 4),
	}
	upstreamServer := func() *mcp.Server {
		s := agEchoServer(server, tools...)
		s.AddPrompt(&mcp.Prompt{Name: "summarise_the_pull_request_and_its_review_comments"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
		return s
	}
	for _, tc := range []struct {
		name            string
		config, options int
		want            int
	}{
		{"default", 0, 0, config.MaxNameLength},
		{"cursor, entry hub", 57, 0, 57},
		{"cursor 60", 60, 0, 60},
		{"least", config.MinNameLength, 0, config.MinNameLength},
		{"serve override", 60, 40, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := func() ([]string, *mcp.ClientSession) {
				cfg := agConfig(agUp{name: server, cfg: config.Upstream{Builtin: "up"}})
				cfg.MaxNameLength = tc.config
				cfg.Discovery = config.Discovery{Enabled: true, DeferAll: true, AutoLoadOnCall: true}
				h, _ := agHub(t, cfg, Options{MaxNameLength: tc.options, Builtin: agBuiltins(map[string]func() *mcp.Server{"up": upstreamServer})})
				cs := agClient(t, h, nil)
				names := h.Catalog().Names()
				for _, p := range h.Catalog().Prompts {
					names = append(names, p.Name)
				}
				names = append(names, agToolNames(t, cs)...) // the meta-tools
				slices.Sort(names)
				return names, cs
			}
			first, cs := start()
			if len(first) != len(tools)+1+2 {
				t.Fatalf("names = %v: want %d tools, a prompt and the two meta-tools", first, len(tools))
			}
			for _, n := range first {
				if len(n) > tc.want {
					t.Errorf("%s: %d characters, over the limit %d", n, len(n), tc.want)
				}
			}
			again, _ := start()
			if !slices.Equal(first, again) {
				t.Errorf("names changed across a restart:\n%v\n%v", first, again)
			}
			long := exposedName(server, tools[len(tools)-1], tc.want)
			if got := fixture.ResultText(agCall(t, cs, long, nil)); got != server+":"+tools[len(tools)-1]+":{}" {
				t.Errorf("%s -> %q", long, got)
			}
		})
	}
}

// agHealth is the status the gateway's /healthz gives h: degraded when a
// server that is not disabled is not ready.
func agHealth(h *Hub) (status string, servers []upstream.Status) {
	status = "ok"
	for _, st := range h.Upstreams() {
		if st.State != upstream.StateReady && st.State != upstream.StateDisabled {
			status = "degraded"
		}
		servers = append(servers, st)
	}
	return status, servers
}
