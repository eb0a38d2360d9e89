package hub

// Shared test helpers: in-process fixture servers (real go-sdk servers over
// in-memory transports, plugged in through Options.Builtin), programmatic
// configs, and a recording client session.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/mcp-hub/mcp-hub/upstream"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

var quietLogger = slog.New(slog.DiscardHandler)

// builtins are package builtin's servers as cmd/mcp-hub hands them to the
// hub (which has no default): for tests whose configs have builtin: entries.
func builtins(cfg *config.Config, log *slog.Logger) func(string, map[string]string) (*mcp.Server, error) {
	return builtin.Maker(builtin.Options{Logger: log, MaxResultBytes: int(min(cfg.ResultLimit(), builtin.MaxResultFrame))})
}

// newTestHub starts a hub on cfg with fixture servers; it is closed when the test ends.
func newTestHub(t testing.TB, cfg *config.Config, fx *fixture.Servers) *Hub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := New(ctx, cfg, Options{Logger: quietLogger, StartupWait: 20 * time.Second, Builtin: fx.Builtin})
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
	return fixture.ResultText(res), res.IsError
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

// toolNames lists the session's tool names, sorted.
func (c *testClient) toolNames() []string {
	c.t.Helper()
	var names []string
	for _, t := range c.tools() {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// The "sec" helpers: fixture servers as real stdio processes, a hub on
// them, and a raw stdio session.

func secHub(t testing.TB, cfg *config.Config) (*Hub, *fixture.Log) {
	t.Helper()
	lg := &fixture.Log{}
	log := slog.New(slog.NewTextHandler(lg, nil))
	h, err := New(context.Background(), cfg, Options{Logger: log, StartupWait: 20 * time.Second, Builtin: builtins(cfg, log)})
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

// secStdioSession runs ServeStdio over pipes and speaks raw lines.
type secStdioSession struct {
	t    *testing.T
	in   *io.PipeWriter
	out  *bufio.Scanner
	done chan error
}

func secServeStdio(t *testing.T, h *Hub) *secStdioSession {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &secStdioSession{t: t, in: inW, out: bufio.NewScanner(outR), done: make(chan error, 1)}
	s.out.Buffer(make([]byte, 1<<20), 16<<20)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { s.done <- h.ServeStdio(ctx, "", inR, outW) }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
	})
	return s
}

func (s *secStdioSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatalf("write: %v", err)
	}
}

// recv returns the next message the hub writes, skipping notifications.
func (s *secStdioSession) recv() map[string]any {
	s.t.Helper()
	var m map[string]any
	if err := json.Unmarshal(s.recvRaw(), &m); err != nil {
		s.t.Fatal(err)
	}
	return m
}

// recvRaw is recv's line as the hub wrote it.
func (s *secStdioSession) recvRaw() []byte {
	s.t.Helper()
	type line struct {
		b   []byte
		err error
	}
	ch := make(chan line, 1)
	go func() {
		for s.out.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
				ch <- line{err: fmt.Errorf("hub wrote non-JSON %q: %v", s.out.Text(), err)}
				return
			}
			if m.Method != "" && m.ID == nil {
				continue
			}
			ch <- line{b: bytes.Clone(s.out.Bytes())}
			return
		}
		ch <- line{err: fmt.Errorf("stdout closed: %v", s.out.Err())}
	}()
	select {
	case l := <-ch:
		if l.err != nil {
			s.t.Fatal(l.err)
		}
		return l.b
	case <-time.After(20 * time.Second):
		s.t.Fatal("no answer from the hub within 20s")
		return nil
	}
}

// The spec helpers (docs/search-tools.md): expected errors, and what a
// search_tools result and description show.

const (
	errNoArgs         = "Error: Please provide at least one of: query, server_name, or tool_names."
	errForecastNotYet = "Error: Tool 'weather__get_forecast' is not yet loaded. Use the 'search_tools' tool to discover and load it first, then call it again."
)

// foundBlock is the first line of a tool's block: "  name: " when the
// name starts with "<server>__", else "  [server] name: ".
var foundBlock = regexp.MustCompile(`(?m)^  (?:\[([^\]]+)\] )?([A-Za-z0-9_-]+): `)

// foundNames lists the tools a search_tools result shows, in order.
func foundNames(text string) []string {
	var out []string
	for _, m := range foundBlock.FindAllStringSubmatch(text, -1) {
		out = append(out, m[2])
	}
	return out
}

// foundServers lists the [server] of each block of a search_tools result.
func foundServers(text string) []string {
	var out []string
	for _, m := range foundBlock.FindAllStringSubmatch(text, -1) {
		server := m[1]
		if server == "" {
			server, _, _ = strings.Cut(m[2], "__")
		}
		out = append(out, server)
	}
	return out
}

func searchDescription(t *testing.T, c *testClient) string {
	t.Helper()
	st := c.tool(SearchToolsName)
	if st == nil {
		t.Fatalf("no search_tools in %v", c.toolNames())
	}
	return st.Description
}

// The "ag" helpers: hubs over real upstreams, in-process go-sdk servers
// (the Builtin hook, in-memory transports), the stdio fixture subprocess
// (testdata/fixture), and HTTP upstreams on 127.0.0.1 (streamable HTTP and
// SSE). Prefixed "ag" so they never clash with other test files of the
// package. Their configs, servers and client calls are package fixture's
// (fixture.Config, fixture.EchoServer, fixture.Client, fixture.CallTool, ...).

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
	if opts.Builtin == nil {
		opts.Builtin = builtins(cfg, opts.Logger)
	}
	h, err := New(fixture.Context(t), cfg, opts)
	if err == nil {
		t.Cleanup(func() { h.Close() })
	}
	return h, log, err
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
