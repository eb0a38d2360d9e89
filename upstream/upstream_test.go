package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// testListener records what an Upstream hands to the hub.
type testListener struct {
	mu      sync.Mutex
	changed int
	notes   []string
	changes chan struct{}
}

func newTestListener() *testListener { return &testListener{changes: make(chan struct{}, 100)} }

func (l *testListener) UpstreamChanged(*Upstream) {
	l.mu.Lock()
	l.changed++
	l.mu.Unlock()
	l.changes <- struct{}{}
}

func (l *testListener) UpstreamNotified(_ context.Context, _ *Upstream, method string, params mcp.Params) {
	b, _ := json.Marshal(params)
	l.mu.Lock()
	l.notes = append(l.notes, method+" "+string(b))
	l.mu.Unlock()
}

// UpstreamRequest answers roots/list with file:///<owner>, or
// file:///listener from the shared session.
func (l *testListener) UpstreamRequest(ctx context.Context, _ *Upstream, method string, _ mcp.Params) (mcp.Result, error) {
	switch method {
	case MethodListRoots:
		var who string
		switch owner := Owner(ctx).(type) {
		case string:
			who = owner
		case PrincipalOwner: // an isolated process of a principal
			who = "principal-" + string(owner)
		default:
			who = "listener"
		}
		return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///" + who}}}, nil
	}
	return nil, fmt.Errorf("test listener: %s not supported", method)
}

func (l *testListener) changeCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.changed
}

// start makes and starts an Upstream; it is closed when the test ends.
func start(t *testing.T, cfg config.Upstream, opts Options) (*Upstream, *testListener, *fixture.Log) {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "up"
	}
	logs := &fixture.Log{}
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	if opts.InitialBackoff == 0 {
		opts.InitialBackoff = 20 * time.Millisecond
	}
	if opts.MaxBackoff == 0 {
		opts.MaxBackoff = 200 * time.Millisecond
	}
	l := newTestListener()
	u := New(cfg, l, opts)
	u.Start(context.Background())
	t.Cleanup(func() {
		u.Close()
		if t.Failed() {
			t.Logf("upstream log:\n%s", logs.String())
		}
	})
	return u, l, logs
}

func waitReady(t *testing.T, u *Upstream) {
	t.Helper()
	fixture.Eventually(t, 20*time.Second, "the upstream to be ready", func() bool { return u.Status().State == StateReady })
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func names[T any](items []*T, name func(*T) string) []string {
	var out []string
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

func callText(t *testing.T, u *Upstream, name string, args any) string {
	t.Helper()
	res, err := u.CallTool(ctxT(t), nil, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range fixture.Result(t, res).Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// pagedServer lists 5 tools, 3 resources, 3 templates and 3 prompts two per page.
func pagedServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "paged", Version: "2"}, &mcp.ServerOptions{PageSize: 2, Instructions: "use me"})
	for i := range 5 {
		s.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint("t", i)}}}, nil
			})
	}
	for i := range 3 {
		s.AddResource(&mcp.Resource{URI: fmt.Sprintf("r://%d", i), Name: fmt.Sprint("r", i)}, nil)
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: fmt.Sprintf("t%d://{x}", i), Name: fmt.Sprint("t", i)}, nil)
		s.AddPrompt(&mcp.Prompt{Name: fmt.Sprint("p", i)}, nil)
	}
	return s
}

// TestListsAllPages: every page of tools, resources, templates and prompts
// is read, with instructions, capabilities and server info.
func TestListsAllPages(t *testing.T) {
	u, l, _ := start(t, config.Upstream{Builtin: "paged"}, Options{Builtin: func(string, map[string]string) (*mcp.Server, error) {
		return pagedServer(), nil
	}})
	waitReady(t, u)
	lists := u.Lists()
	if got := names(lists.Tools, func(x *mcp.Tool) string { return x.Name }); !slices.Equal(got, []string{"t0", "t1", "t2", "t3", "t4"}) {
		t.Errorf("tools = %v", got)
	}
	if got := names(lists.Resources, func(x *mcp.Resource) string { return x.URI }); len(got) != 3 {
		t.Errorf("resources = %v", got)
	}
	if got := names(lists.Templates, func(x *mcp.ResourceTemplate) string { return x.URITemplate }); len(got) != 3 {
		t.Errorf("templates = %v", got)
	}
	if got := names(lists.Prompts, func(x *mcp.Prompt) string { return x.Name }); len(got) != 3 {
		t.Errorf("prompts = %v", got)
	}
	if lists.Instructions != "use me" || lists.ServerInfo.Name != "paged" || lists.Capabilities.Tools == nil {
		t.Errorf("instructions %q, server info %+v", lists.Instructions, lists.ServerInfo)
	}
	fixture.Eventually(t, 30*time.Second, "UpstreamChanged", func() bool { return l.changeCount() == 1 })
	st := u.Status()
	if st.Transport != config.TransportBuiltin || st.Tools != 5 || st.ConnectTime <= 0 || st.LastError != "" {
		t.Errorf("status = %+v", st)
	}
	if got := callText(t, u, "t3", nil); got != "t3" {
		t.Errorf("call t3 -> %q", got)
	}
}

// TestStdioServer: a stdio subprocess is connected, its stderr goes to our
// log tagged with the server name, and it only gets the base environment
// plus its configured env.
func TestStdioServer(t *testing.T) {
	t.Setenv("MCP_HUB_TEST_SECRET", "do-not-leak")
	cfg := config.Upstream{Name: "proc", Command: fixture.Build(t), Args: []string{"-name", "proc", "-tools", "echo", "-stderr-lines", "2", "-features"},
		Env: map[string]string{"GREETING": "hi"}}
	u, l, logs := start(t, cfg, Options{})
	waitReady(t, u)
	if got := callText(t, u, "echo", map[string]any{"a": 1}); got != `proc:echo:{"a":1}` {
		t.Errorf("echo -> %q", got)
	}
	fixture.Eventually(t, 30*time.Second, "stderr in the log", func() bool {
		s := logs.String()
		return strings.Contains(s, "server=proc") && strings.Contains(s, "proc stderr line 2")
	})
	env := u.childEnv()
	if !slices.Contains(env, "GREETING=hi") || slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "MCP_HUB_TEST_SECRET=") }) {
		t.Errorf("child env = %v", env)
	}
	u.cfg.InheritEnv = true
	if env := u.childEnv(); !slices.Contains(env, "MCP_HUB_TEST_SECRET=do-not-leak") || !slices.Contains(env, "GREETING=hi") {
		t.Errorf("inherit_env child env lacks the hub's environment")
	}
	// Log and progress notifications sent during a call are handed over
	// before CallTool returns.
	cs, err := u.Session()
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.SetLoggingLevel(ctxT(t), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		msg := fmt.Sprint("m", i)
		callText(t, u, "log", map[string]any{"message": msg})
		l.mu.Lock()
		last := strings.Join(l.notes[max(len(l.notes)-1, 0):], "")
		l.mu.Unlock()
		if !strings.Contains(last, `"data":"`+msg+`"`) {
			t.Fatalf("call %d returned before its log message was forwarded (last: %s)", i, last)
		}
	}
	// Server-to-client requests go to the listener.
	if got := callText(t, u, "roots", nil); got != "file:///listener" {
		t.Errorf("roots -> %q", got)
	}
}

// TestFailingStart: a server that exits at start is reported (state, last
// error), retried with backoff, and marked unhealthy after UnhealthyAfter
// failures; Session says to retry.
func TestFailingStart(t *testing.T) {
	u, l, _ := start(t, config.Upstream{Name: "bad", Command: fixture.Build(t), Args: []string{"-fail-start"}}, Options{UnhealthyAfter: 3})
	select {
	case <-u.Attempted():
	case <-time.After(20 * time.Second):
		t.Fatal("first attempt never ended")
	}
	st := u.Status()
	if st.State == StateReady || !strings.Contains(st.LastError, "connect") {
		t.Errorf("status after the first attempt = %+v", st)
	}
	fixture.Eventually(t, 20*time.Second, "unhealthy", func() bool { return u.Status().State == StateUnhealthy })
	_, err := u.Session()
	ue, ok := err.(*UnavailableError)
	if !ok || ue.Server != "bad" || ue.State != StateUnhealthy || !strings.Contains(err.Error(), "failing at start as requested") {
		t.Errorf("Session() = %v", err)
	}
	if _, err := u.CallTool(ctxT(t), nil, &mcp.CallToolParams{Name: "x"}); err == nil || !strings.Contains(err.Error(), "server 'bad' is unhealthy") {
		t.Errorf("call to a failing server: %v", err)
	}
	if l.changeCount() != 0 {
		t.Errorf("UpstreamChanged called for a server that never connected")
	}
	// Missing commands say how to fix them.
	u2, _, _ := start(t, config.Upstream{Name: "nope", Command: "no-such-mcp-server-xyz"}, Options{})
	<-u2.Attempted()
	if st := u2.Status(); !strings.Contains(st.LastError, `command "no-such-mcp-server-xyz" not found`) {
		t.Errorf("missing command: %+v", st)
	}
}

// TestHangingStart: a server that does not answer initialize within the
// timeout is reported without blocking, and its process is not left behind.
func TestHangingStart(t *testing.T) {
	marker := fmt.Sprintf("hang-%d", time.Now().UnixNano())
	begin := time.Now()
	u, _, _ := start(t, config.Upstream{Name: "hang", Command: fixture.Build(t), Args: []string{"-name", marker, "-start-delay", "30s"},
		Timeout: config.Duration(300 * time.Millisecond)}, Options{InitialBackoff: 5 * time.Second})
	<-u.Attempted()
	if took := time.Since(begin); took > 5*time.Second {
		t.Errorf("first attempt took %s with a 300ms timeout", took)
	}
	if st := u.Status(); st.State == StateReady || st.LastError == "" {
		t.Errorf("status = %+v", st)
	}
	if runtime.GOOS == "linux" {
		fixture.Eventually(t, 10*time.Second, "the hung child to be killed", func() bool { return countProcs(marker) == 0 })
	}
}

// countProcs counts processes whose command line contains marker.
func countProcs(marker string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	n := 0
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err == nil && bytes.Contains(b, []byte(marker)) {
			n++
		}
	}
	return n
}

// TestCrashRestart: a stdio server that exits is restarted and re-listed;
// calls in between get a retryable error; Close kills the child.
func TestCrashRestart(t *testing.T) {
	marker := fmt.Sprintf("crash-%d", time.Now().UnixNano())
	u, l, _ := start(t, config.Upstream{Name: "flaky", Command: fixture.Build(t), Args: []string{"-name", marker, "-tools", "echo", "-crash-after", "1", "-features"}}, Options{})
	waitReady(t, u)
	if got := callText(t, u, "echo", nil); got != marker+":echo:{}" {
		t.Fatalf("echo -> %q", got)
	}
	fixture.Eventually(t, 10*time.Second, "a restart", func() bool { return u.Status().Restarts >= 1 })
	waitReady(t, u)
	fixture.Eventually(t, 30*time.Second, "a re-list", func() bool { return l.changeCount() >= 2 })
	if got := callText(t, u, "echo", nil); got != marker+":echo:{}" {
		t.Errorf("echo after restart -> %q", got)
	}
	if runtime.GOOS == "linux" {
		u.Close()
		fixture.Eventually(t, 30*time.Second, "the child to exit after Close", func() bool { return countProcs(marker) == 0 })
		if st := u.Status(); st.State != StateClosed {
			t.Errorf("state after Close = %s", st.State)
		}
	}
}

// TestCallTimeout: a call longer than the server's timeout fails with a
// message that names the setting to raise.
func TestCallTimeout(t *testing.T) {
	cfg := config.Upstream{Name: "slow", Command: fixture.Build(t), Args: []string{"-features"}, Timeout: config.Duration(2 * time.Second)}
	u, _, _ := start(t, cfg, Options{})
	waitReady(t, u)
	u.cfg.Timeout = config.Duration(200 * time.Millisecond) // connect with the long one, call with the short one
	_, err := u.CallTool(ctxT(t), nil, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 5000}})
	if err == nil || !strings.Contains(err.Error(), "server 'slow': tool 'sleep' timed out after 200ms") ||
		!strings.Contains(err.Error(), "(raise 'timeout' for this server)") {
		t.Errorf("timeout error = %v", err)
	}
	if got := callText(t, u, "sleep", map[string]any{"ms": 1}); got != "slept" {
		t.Errorf("after a timeout: %q", got)
	}
}

// TestDisabled: a disabled server never starts and says how to enable it.
func TestDisabled(t *testing.T) {
	u, _, _ := start(t, config.Upstream{Name: "off", Command: "whatever", Disabled: true}, Options{})
	select {
	case <-u.Attempted():
	default:
		t.Fatal("a disabled server blocks start-up")
	}
	if _, err := u.Session(); err == nil || !strings.Contains(err.Error(), "server 'off' is disabled; enable it in the config") {
		t.Errorf("Session() = %v", err)
	}
}

// TestHTTPUpstreams: streamable HTTP with configured headers, and SSE whose
// stream must outlive the connect timeout's context.
func TestHTTPUpstreams(t *testing.T) {
	echo := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "h", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo " + string(req.Params.Arguments)}}}, nil
			})
		return s
	}
	var authMu sync.Mutex
	var auths []string
	streamable := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		authMu.Lock()
		auths = append(auths, r.Header.Get("Authorization"))
		authMu.Unlock()
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return echo() }, &mcp.StreamableHTTPOptions{Stateless: true}).ServeHTTP(w, r)
	}))
	t.Cleanup(streamable.Close) // after the upstreams close: Close waits for open streams
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return echo() }, nil))
	t.Cleanup(sse.Close)

	hu, _, _ := start(t, config.Upstream{Name: "web", URL: streamable.URL, Headers: map[string]string{"Authorization": "Bearer s3cret"}, Timeout: config.Duration(2 * time.Second)}, Options{})
	su, _, _ := start(t, config.Upstream{Name: "old", URL: sse.URL, Transport: config.TransportSSE, Timeout: config.Duration(2 * time.Second)}, Options{})
	waitReady(t, hu)
	waitReady(t, su)
	time.Sleep(100 * time.Millisecond) // the connect's context is gone by now
	for _, u := range []*Upstream{hu, su} {
		if got := callText(t, u, "echo", map[string]any{"x": 1}); got != `echo {"x":1}` {
			t.Errorf("%s echo -> %q", u.Name(), got)
		}
		if st := u.Status(); st.State != StateReady || st.Restarts != 0 {
			t.Errorf("%s status = %+v", u.Name(), st)
		}
	}
	authMu.Lock()
	defer authMu.Unlock()
	if len(auths) == 0 || slices.ContainsFunc(auths, func(a string) bool { return a != "Bearer s3cret" }) {
		t.Errorf("Authorization headers seen: %q", auths)
	}
}

// TestRelistOnListChanged: the upstream's list_changed triggers a re-list
// and UpstreamChanged.
func TestRelistOnListChanged(t *testing.T) {
	u, l, _ := start(t, config.Upstream{Name: "dyn", Command: fixture.Build(t), Args: []string{"-tools", "a", "-add-tool-after", "100ms", "-add-tool", "b"}}, Options{})
	waitReady(t, u)
	fixture.Eventually(t, 10*time.Second, "tool b", func() bool {
		return slices.Equal(names(u.Lists().Tools, func(x *mcp.Tool) string { return x.Name }), []string{"a", "b"})
	})
	// The lists are stored a moment before they are handed on.
	fixture.Eventually(t, 30*time.Second, "UpstreamChanged for the re-list", func() bool { return l.changeCount() >= 2 })
}

// TestCountingBody: notifications in an SSE stream are counted whatever
// the read sizes, and responses and requests are not.
func TestCountingBody(t *testing.T) {
	stream := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"x\"}}\n\n" +
		"id: 2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"t\",\"progress\":1}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"sampling/createMessage\",\"params\":{\"note\":\"notifications/message\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"a\"}}\n\n" +
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"notifications/message " + strings.Repeat("y", 3000) + "\"}]}}\n\n"
	for _, oneByte := range []bool{false, true} {
		var c notificationCounter
		c.cond = sync.NewCond(&c.mu)
		var r io.Reader = strings.NewReader(stream)
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		b := &countingBody{ReadCloser: io.NopCloser(r), tap: &wireTap{counter: &c, schemas: &rawSchemas{}}}
		out, err := io.ReadAll(b)
		if err != nil || string(out) != stream {
			t.Fatalf("the body was altered: %v", err)
		}
		if c.read != 2 {
			t.Errorf("oneByte=%v: counted %d notifications, want 2", oneByte, c.read)
		}
	}
}

// TestValidate: config errors say what to change.
func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  config.Upstream
		want string
	}{
		{config.Upstream{}, "no transport: set one of 'command' (stdio), 'url' (HTTP) or 'builtin'"},
		{config.Upstream{Command: "a", URL: "http://x"}, "set only one of 'command', 'url' and 'builtin'"},
		{config.Upstream{URL: "localhost:8080/mcp"}, `url "localhost:8080/mcp" is not an http(s) URL: write it like http://127.0.0.1:8080/mcp`},
		{config.Upstream{URL: "ftp://x/mcp"}, "is not an http(s) URL"},
		{config.Upstream{URL: "http://x/mcp", Transport: "websocket"}, `transport "websocket" is unknown: use 'streamable-http' (default) or 'sse'`},
		{config.Upstream{Command: "a", Transport: "sse"}, "'transport: sse' needs a 'url'"},
		{config.Upstream{Command: "a", Headers: map[string]string{"a": "b"}}, "'headers' only apply to url servers"},
		{config.Upstream{URL: "http://x", Args: []string{"a"}}, "'args' and 'cwd' need a 'command'"},
		{config.Upstream{Command: "a", Timeout: config.Duration(-time.Second)}, "timeout must be positive"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	for _, ok := range []config.Upstream{{Command: "a", Args: []string{"b"}}, {URL: "https://x/mcp", Transport: "sse"}, {Builtin: "time"}} {
		if err := ok.Validate(); err != nil {
			t.Errorf("Validate(%+v) = %v", ok, err)
		}
	}
	if k := (&config.Upstream{URL: "http://x"}).Kind(); k != config.TransportStreamable {
		t.Errorf("default url transport = %s", k)
	}
}

func TestDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{"30s": 30 * time.Second, "1m30s": 90 * time.Second, "90": 90 * time.Second, "0.5": 500 * time.Millisecond} {
		var d config.Duration
		if err := d.UnmarshalText([]byte(in)); err != nil || time.Duration(d) != want {
			t.Errorf("%q -> %v %v, want %v", in, time.Duration(d), err, want)
		}
	}
	var d config.Duration
	if err := d.UnmarshalText([]byte("soon")); err == nil || !strings.Contains(err.Error(), "write it like 30s or 2m") {
		t.Errorf("bad duration: %v", err)
	}
}
