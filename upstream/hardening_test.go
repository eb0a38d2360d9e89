//go:build unix

package upstream

// Hardening tests: upstreams that misbehave on purpose (the fixture's
// -hostile tools, hand-written HTTP servers), and the hub's containment:
// panics in its own handlers, oversized results, servers that stop
// reading, huge stderr lines, list_changed storms, endless pagination,
// credentials and redirects, secrets in errors.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// panickyListener panics in each of its methods the first time it is
// called, then records like ftListener.
type panickyListener struct {
	changed, notified, requested atomic.Int64
}

func (l *panickyListener) UpstreamChanged(*Upstream) {
	if l.changed.Add(1) == 1 {
		panic("listener bug in UpstreamChanged")
	}
}

func (l *panickyListener) UpstreamNotified(context.Context, *Upstream, string, mcp.Params) {
	if l.notified.Add(1) == 1 {
		panic("listener bug in UpstreamNotified")
	}
}

func (l *panickyListener) UpstreamRequest(context.Context, *Upstream, string, mcp.Params) (mcp.Result, error) {
	if l.requested.Add(1) == 1 {
		var m map[string]int
		m["boom"]++ // a real nil-map panic
	}
	return &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///ok"}}}, nil
}

// TestPanicInListener: a panic in the hub's handler of what an upstream
// sends (its list change, a log message, a roots request) fails that one
// message; the connection, its calls and the process go on.
func TestPanicInListener(t *testing.T) {
	opts, lg := ftOpts(t)
	l := &panickyListener{}
	u := New(config.Upstream{Name: "fx", Command: fixture.Build(t), Args: []string{"-name", "fx", "-features"}}, l, opts)
	u.Start(context.Background())
	t.Cleanup(func() { u.Close() })
	ftReady(t, u)
	pid := ftPID(t, u)

	if err := u.SetLoggingLevel(ftCtx(t), nil, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	if got := fixture.ResultText(ftCall(t, u, "log", map[string]any{"message": "hello"})); got != "logged" {
		t.Errorf("log tool after a panicking log handler = %q", got)
	}
	res, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "roots"})
	if err != nil {
		t.Fatalf("roots after a panicking request handler: %v", err)
	}
	if text := fixture.ResultText(fixture.Result(t, res)); !strings.Contains(text, "internal error in mcp-hub") {
		t.Errorf("roots answered %q, want the hub's internal error passed to the server", text)
	}
	if got := fixture.ResultText(ftCall(t, u, "roots", nil)); got != "file:///ok" {
		t.Errorf("roots after the panic = %q", got)
	}
	if st := u.Status(); st.State != StateReady || st.Restarts != 0 || ftPID(t, u) != pid {
		t.Errorf("status %+v: the connection should have stayed up", st)
	}
	for _, want := range []string{"listener bug in UpstreamChanged", "listener bug in UpstreamNotified", "assignment to entry in nil map"} {
		lg.WaitFor(t, "the panic logged", 30*time.Second, func(s string) bool { return strings.Contains(s, want) })
	}
	logs := lg.String()
	for _, want := range []string{"listener bug in UpstreamChanged", "listener bug in UpstreamNotified", "assignment to entry in nil map"} {
		if n := strings.Count(logs, want); n != 1 {
			t.Errorf("panic %q logged %d times, want once", want, n)
		}
	}
	if !strings.Contains(logs, "stack=") || !strings.Contains(logs, "hardening_test.go") {
		t.Errorf("the panic's stack is not in the log")
	}
}

// TestResultLimit: a result over max_result_bytes fails that call with an
// error naming the limit, over every transport; the connection stays up
// and the next call works.
func TestResultLimit(t *testing.T) {
	const limit = 1 << 20
	sdkServer := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var in struct{ Bytes int }
				json.Unmarshal(req.Params.Arguments, &in)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil
			})
		return s
	}
	cases := []struct {
		name string
		cfg  func(t *testing.T) config.Upstream
	}{
		{"stdio", func(t *testing.T) config.Upstream {
			return config.Upstream{Command: fixture.Build(t), Args: []string{"-name", "fx", "-hostile"}}
		}},
		{"streamable HTTP (SSE answers)", func(t *testing.T) config.Upstream {
			return config.Upstream{URL: fixture.StartHTTP(t, "-name", "fx", "-hostile")}
		}},
		{"streamable HTTP (JSON answers)", func(t *testing.T) config.Upstream {
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return sdkServer() },
				&mcp.StreamableHTTPOptions{JSONResponse: true, Stateless: true}))
			t.Cleanup(srv.Close)
			return config.Upstream{URL: srv.URL}
		}},
		{"SSE", func(t *testing.T) config.Upstream {
			s := sdkServer()
			srv := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
			t.Cleanup(srv.Close)
			return config.Upstream{URL: srv.URL, Transport: config.TransportSSE}
		}},
		{"builtin (in memory)", func(t *testing.T) config.Upstream {
			return config.Upstream{Builtin: "big"}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts, lg := ftOpts(t)
			opts.MaxResultBytes = limit
			opts.Builtin = func(string, map[string]string) (*mcp.Server, error) { return sdkServer(), nil }
			cfg := tc.cfg(t)
			cfg.Name = "fx"
			u, _ := ftStart(t, cfg, opts)
			ftReady(t, u)
			for _, size := range []int{limit + 1, 3 * limit} {
				_, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"bytes": size}})
				var tl *ResultTooLargeError
				if !errors.As(err, &tl) || !strings.Contains(err.Error(), "max_result_bytes (1048576 bytes)") || !strings.Contains(err.Error(), "'fx'") {
					t.Fatalf("a %d-byte result: err = %v, want *ResultTooLargeError naming the server and the limit", size, err)
				}
			}
			if got := fixture.ResultText(ftCall(t, u, "big", map[string]any{"bytes": 1000})); len(got) != 1000 {
				t.Errorf("a small result after the large ones: %d bytes", len(got))
			}
			if st := u.Status(); st.State != StateReady || st.Restarts != 0 {
				t.Errorf("status %+v: the connection should have stayed up\n%s", st, lg.String())
			}
		})
	}
}

// TestDroppedID: the id of a message too large to keep is read from its
// first or last bytes, in the orders servers write them.
func TestDroppedID(t *testing.T) {
	pad := strings.Repeat("x", 1000)
	cases := []struct {
		line string
		id   string
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":"` + pad + `"}}`, "7"},
		{`{"jsonrpc":"2.0","id":"mcp-hub-call-3","result":{"x":"` + pad + `"}}`, `"mcp-hub-call-3"`},
		{`{"id":12,"jsonrpc":"2.0","result":"` + pad + `"}`, "12"},
		{`{"result":{"content":"` + pad + `"},"jsonrpc":"2.0","id":9}`, "9"}, // TypeScript SDK order
		{`{"jsonrpc":"2.0","id":4,"error":{"code":1,"message":"` + pad + `"}}`, "4"},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + pad + `"}}`, ""},
		{`{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{"x":"` + pad + `"}}`, ""},
		{`not json ` + pad, ""},
	}
	for _, tc := range cases {
		head, tail := tc.line[:edge], tc.line[len(tc.line)-edge:]
		id, ok := droppedID([]byte(head), []byte(tail))
		if string(id) != tc.id || ok != (tc.id != "") {
			t.Errorf("droppedID(%.40q...) = %s, %v; want %s", tc.line, id, ok, tc.id)
		}
	}
}

// TestSSELimitBody: events under the limit pass byte for byte; one over it
// becomes the error answer for its id (keeping its other fields), or is
// dropped and reported when it has no id.
func TestSSELimitBody(t *testing.T) {
	const limit = 1000
	big := strings.Repeat("x", 5000)
	small := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n"
	cases := []struct {
		name, in string
		want     []string // in order
		dropped  int
	}{
		{"small events pass", small + ": comment\n\nid: 7\ndata: {\"a\":1}\n\n", []string{small + ": comment\n\nid: 7\ndata: {\"a\":1}\n\n"}, 0},
		{"large answer", small + "id: 9\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"t\":\"" + big + "\"}}\n\n" + small,
			[]string{small, "id: 9\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{\"code\":-32013,", "\n\n" + small}, 0},
		{"large notification", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"d\":\"" + big + "\"}}\n\n" + small,
			[]string{small}, 1},
		{"CRLF and a line in pieces", "data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":\"" + big + big + "\"}\r\n\r\n",
			[]string{`"id":3,"error":{"code":-32013`}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var dropped int
			b := &sseLimitBody{src: bufio.NewReaderSize(strings.NewReader(tc.in), 16), closer: io.NopCloser(nil), limit: limit,
				tooLarge: &ResultTooLargeError{Server: "s", Limit: limit}, dropped: func(int64) { dropped++ }}
			out, err := io.ReadAll(b)
			if err != nil {
				t.Fatal(err)
			}
			rest := string(out)
			for _, w := range tc.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %.80q (in order):\n%.400q", w, out)
				}
				rest = rest[i+len(w):]
			}
			if tc.dropped == 0 && len(tc.want) == 1 && tc.want[0] == tc.in && string(out) != tc.in {
				t.Errorf("small events changed:\n%q\n%q", out, tc.in)
			}
			if dropped != tc.dropped {
				t.Errorf("%d dropped events reported, want %d", dropped, tc.dropped)
			}
		})
	}
}

// TestStdioServerStopsReading: a server that stops reading its stdin gets
// the calls that cannot be written timed out at their deadline and is
// restarted; the hub never hangs, and calls work again after the restart.
func TestStdioServerStopsReading(t *testing.T) {
	opts, _ := ftOpts(t)
	const timeout = 1500 * time.Millisecond
	u, _ := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: []string{"-name", "fx", "-hostile", "-features"}, Timeout: config.Duration(timeout)}, opts)
	ftReady(t, u)
	pid := ftPID(t, u)
	ftCall(t, u, "stall", nil)
	// More than a pipe holds, so the write blocks.
	args := json.RawMessage(`{"ms":1,"pad":"` + strings.Repeat("p", 4<<20) + `"}`)
	begin := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = u.CallTool(context.Background(), nil, &mcp.CallToolParams{Name: "sleep", Arguments: args})
		})
	}
	wg.Wait()
	// Without write deadlines these calls never return. With them, about
	// the timeout; a loaded machine (-race, the suite twice) adds seconds.
	took := time.Since(begin)
	t.Logf("calls to a server that stopped reading returned after %v (timeout %v)", took, timeout)
	if took > timeout+20*time.Second {
		t.Errorf("calls to a server that stopped reading returned after %v, want about its timeout (%v)", took, timeout)
	}
	stalled := 0
	for _, err := range errs {
		if err == nil {
			t.Fatal("a call to a server that stopped reading succeeded")
		}
		if strings.Contains(err.Error(), "stopped reading its input") {
			stalled++
		}
	}
	if stalled == 0 {
		t.Errorf("no call said the server stopped reading: %v", errs)
	}
	ftWait(t, "the server restarted", func() bool { return u.Status().Restarts >= 1 && u.Status().State == StateReady })
	if got := ftPID(t, u); got == pid {
		t.Errorf("the same process (%d) still answers", pid)
	}
	if got := fixture.ResultText(ftCall(t, u, "sleep", map[string]any{"ms": 1})); got != "slept" {
		t.Errorf("after the restart: %q", got)
	}
}

// TestStderrLongLine: a 2 MiB line on stderr is logged truncated; the
// reader goes on (the child is neither blocked nor killed by SIGPIPE).
func TestStderrLongLine(t *testing.T) {
	opts, lg := ftOpts(t)
	u, _ := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: []string{"-name", "fx", "-features", "-stderr-line-bytes", strconv.Itoa(2 << 20)}}, opts)
	ftReady(t, u)
	lg.WaitFor(t, "the line after the long one", 20*time.Second, func(s string) bool { return strings.Contains(s, "after the long line") })
	if !strings.Contains(lg.String(), "[line of 2097153 bytes, truncated]") {
		t.Errorf("the long line was not logged as truncated")
	}
	for range 3 {
		ftCall(t, u, "log", map[string]any{"message": strings.Repeat("m", 100)})
	}
	if st := u.Status(); st.State != StateReady || st.Restarts != 0 {
		t.Errorf("status %+v: want ready, never restarted", st)
	}
	if len(lg.String()) > 1<<20 {
		t.Errorf("the log holds %d bytes: the long line was logged whole", len(lg.String()))
	}
}

// TestListChangedStorm: 1,000 list_changed notifications at once cause at
// most a couple of re-lists, not 1,000.
func TestListChangedStorm(t *testing.T) {
	opts, _ := ftOpts(t)
	opts.Logger = quietLogger()
	u, l := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: []string{"-name", "fx", "-hostile"}}, opts)
	ftReady(t, u)
	before := l.changed.Load()
	begin := time.Now()
	ftCall(t, u, "storm", map[string]any{"n": 1000})
	var arrived time.Duration
	ftWait(t, "every notification handled and re-listing done", func() bool {
		st := u.Status()
		if st.ListChanges == 1000 && arrived == 0 {
			arrived = time.Since(begin)
		}
		return st.ListChanges == 1000 && !st.Relisting
	})
	st := u.Status()
	// A couple; on a machine so loaded that the notifications take long to
	// arrive, one more per RelistInterval they took.
	most := max(4, 2+int64(arrived/RelistInterval))
	t.Logf("1000 list_changed in %v -> %d re-lists (at most %d)", arrived, st.Relists, most)
	if st.Relists < 1 || st.Relists > most {
		t.Errorf("%d re-lists for 1000 notifications that arrived in %v, want 1 to %d", st.Relists, arrived, most)
	}
	if got := l.changed.Load() - before; got != st.Relists {
		t.Errorf("%d list changes reported to the listener, want one per re-list (%d)", got, st.Relists)
	}
}

// pagingServer is a hand-written streamable HTTP MCP server (JSON answers,
// no session) whose tools/list pages go on by next(cursor).
func pagingServer(t *testing.T, next func(page int) string) (url string, pages *atomic.Int64) {
	pages = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result string
		switch req.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"pager","version":"1"}}`
		case "tools/list":
			n := int(pages.Add(1))
			cursor, _ := json.Marshal(next(n))
			result = fmt.Sprintf(`{"tools":[{"name":"tool_%d","inputSchema":{"type":"object"}},null],"nextCursor":%s}`, n, cursor)
		default:
			result = `{}`
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, req.ID, result)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, pages
}

// TestPaginationCapped: a server whose pages never end, or whose cursor
// goes round, is read up to the limit; what was read is served and a
// warning names the server. Null entries are dropped.
func TestPaginationCapped(t *testing.T) {
	cases := []struct {
		name      string
		next      func(page int) string
		wantPages int
		warning   string
	}{
		{"endless", func(n int) string { return fmt.Sprintf("c%d", n) }, MaxListPages, "lists its tools in more pages than the hub reads; keeping the first 1000 pages"},
		{"cursor goes round", func(n int) string { return fmt.Sprintf("c%d", n%3) }, 4, "sent a tools cursor it had sent before"},
		{"three pages", func(n int) string {
			if n == 3 {
				return ""
			}
			return fmt.Sprintf("c%d", n)
		}, 3, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			url, pages := pagingServer(t, tc.next)
			opts, lg := ftOpts(t)
			opts.Logger = quietLoggerTo(lg)
			u, _ := ftStart(t, config.Upstream{Name: "pager", URL: url}, opts)
			ftReady(t, u)
			if got := len(u.Lists().Tools); got != tc.wantPages || int(pages.Load()) != tc.wantPages {
				t.Errorf("%d tools from %d pages, want %d of each", got, pages.Load(), tc.wantPages)
			}
			if tc.warning != "" && !strings.Contains(lg.String(), "server 'pager' "+tc.warning) {
				t.Errorf("no warning %q naming the server in:\n%s", tc.warning, lg.String())
			}
		})
	}
}

// TestCredentialsStayOnOrigin: configured headers reach the configured
// origin only. A redirect or an SSE endpoint on another origin, or from
// https to http, is refused before anything is sent there, and the server
// reports an error naming both origins; a redirect within the origin is
// followed.
func TestCredentialsStayOnOrigin(t *testing.T) {
	const secret = "key-5f2e9c4b7a"
	// other is a second origin: a second listener on 127.0.0.1. It counts
	// what it receives, and whether the secret came with it.
	var otherHits, otherLeaks atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		for _, vs := range r.Header {
			for _, v := range vs {
				if strings.Contains(v, secret) {
					otherLeaks.Add(1)
				}
			}
		}
		http.Error(w, "not here", http.StatusNotFound)
	}))
	t.Cleanup(other.Close)

	mcpServer := mcp.NewServer(&mcp.Implementation{Name: "ok", Version: "1"}, nil)
	mcpServer.AddTool(&mcp.Tool{Name: "ping", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil
		})
	streamable := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return mcpServer }, nil)
	var sawSecret atomic.Int64
	same := func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") == secret {
			sawSecret.Add(1)
		}
		switch r.URL.Path {
		case "/old":
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
		case "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: endpoint\ndata: %s/messages?sessionid=1\n\n", other.URL)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		default:
			streamable.ServeHTTP(w, r)
		}
	}
	plain := httptest.NewServer(http.HandlerFunc(same))
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// https -> http on another port of the same host: a downgrade.
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(tlsSrv.Close)

	cases := []struct {
		name      string
		cfg       config.Upstream
		ok        bool
		wantError []string
	}{
		{"redirect within the origin", config.Upstream{URL: plain.URL + "/old"}, true, nil},
		{"redirect to another origin", config.Upstream{URL: plain.URL + "/away"},
			false, []string{"refused a redirect to " + other.URL, "configured at " + plain.URL}},
		{"SSE endpoint on another origin", config.Upstream{URL: plain.URL + "/sse", Transport: config.TransportSSE},
			false, []string{"refused a request to " + other.URL, "configured at " + plain.URL}},
		{"https to http", config.Upstream{URL: tlsSrv.URL + "/mcp"},
			false, []string{"refused a redirect to " + other.URL, "configured at " + tlsSrv.URL, "never from https down to http"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			otherHits.Store(0)
			sawSecret.Store(0)
			opts, _ := ftOpts(t)
			opts.UnhealthyAfter = 1
			opts.Cooldown = time.Minute
			opts.HTTPTransport = tlsSrv.Client().Transport // trusts the test certificate
			tc.cfg.Name = "remote"
			tc.cfg.Headers = map[string]string{"X-Api-Key": secret}
			u, _ := ftStart(t, tc.cfg, opts)
			if tc.ok {
				ftReady(t, u)
				if got := fixture.ResultText(ftCall(t, u, "ping", nil)); got != "pong" {
					t.Errorf("ping = %q", got)
				}
				if sawSecret.Load() == 0 {
					t.Error("the configured origin never got the header")
				}
				return
			}
			ftWait(t, "the server to fail", func() bool { return u.Status().State == StateUnhealthy })
			for _, want := range tc.wantError {
				if st := u.Status(); !strings.Contains(st.LastError, want) {
					t.Errorf("last error %q lacks %q", st.LastError, want)
				}
			}
			if otherHits.Load() != 0 || otherLeaks.Load() != 0 {
				t.Errorf("the other origin got %d requests (%d with the secret)", otherHits.Load(), otherLeaks.Load())
			}
		})
	}
}

// TestSecretValuesFromConfig: the literal secrets of a server entry are
// found, and ordinary values are not.
func TestSecretValuesFromConfig(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	cases := []struct {
		name string
		cfg  config.Upstream
		want []string
		not  []string
	}{
		{"URL user without password", config.Upstream{URL: "https://tok3n-abcdef@example.com/mcp"}, []string{"tok3n-abcdef"}, nil},
		{"URL user and password", config.Upstream{URL: "https://me:pw@example.com/mcp"}, []string{"me:pw@"}, []string{"me"}},
		{"key in URL path", config.Upstream{URL: "https://mcp.example.com/v1/sk-proj-Abc123Def456Ghi789/sse"}, []string{"sk-proj-Abc123Def456Ghi789"}, []string{"v1", "sse"}},
		{"flag then value", config.Upstream{Command: "x", Args: []string{"--token", "hunter22", "--port", "8080"}}, []string{"hunter22"}, []string{"8080", "--port"}},
		{"flag=value", config.Upstream{Command: "x", Args: []string{"--api-key=abc123", "--password=swordfish", "--secret=s3cr"}}, []string{"abc123", "swordfish", "s3cr"}, nil},
		{"keys by their look", config.Upstream{Command: "x", Args: []string{"-y", "@modelcontextprotocol/server-github", "/tmp/data2024/x", "ghp_0123456789abcdefABCDEF", "xoxb-1234-5678-abcdefgh", jwt, "Zq8f3K2m9X1pL7vB4nR6tY0wS5dH"}},
			[]string{"ghp_0123456789abcdefABCDEF", "xoxb-1234-5678-abcdefgh", jwt, "Zq8f3K2m9X1pL7vB4nR6tY0wS5dH"},
			[]string{"-y", "@modelcontextprotocol/server-github", "/tmp/data2024/x"}},
		{"words are not keys", config.Upstream{Command: "x", Args: []string{"server-everything-but-longer-name", "mcp-server-filesystem"}}, nil,
			[]string{"server-everything-but-longer-name", "mcp-server-filesystem"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.cfg.SecretValues()
			for _, w := range tc.want {
				if !slicesContains(got, w) {
					t.Errorf("SecretValues() = %q lacks %q", got, w)
				}
			}
			for _, n := range tc.not {
				if slicesContains(got, n) {
					t.Errorf("SecretValues() = %q holds %q, which is not a secret", got, n)
				}
			}
		})
	}
}

func slicesContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// quietLogger drops everything: for tests whose servers are chatty.
func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// quietLoggerTo logs at info and above to w.
func quietLoggerTo(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}
