package gateway

// Wire-order tests for the hub's toolsNotice (hub/listchanged.go), over
// both fronts: stdio (the hub's ServeStdio) and the gateway's streamable
// HTTP. They read the raw bytes the hub writes (its stdout pipe; the SSE
// bodies of the HTTP POST and GET streams), not a client library's
// callbacks, whose order says nothing about the wire.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// The hub's own names for what these tests look for on the wire.
const (
	// toolsListChanged is the notification toolsNotice orders.
	toolsListChanged = "notifications/tools/list_changed"
	// relistSettle is how long a result still waits after the client's
	// re-list (hub/listchanged.go).
	relistSettle = 50 * time.Millisecond
	// alwaysLoadKey is the _meta key of a tool to keep loaded
	// (hub/catalog.go).
	alwaysLoadKey = "anthropic/alwaysLoad"
)

// wireMsg is one JSON-RPC message as read off the wire.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (m wireMsg) answers(id int) bool {
	return m.Method == "" && string(m.ID) == strconv.Itoa(id)
}

func (m wireMsg) String() string {
	if m.Method != "" {
		return m.Method
	}
	return "response " + string(m.ID)
}

func countMethod(msgs []wireMsg, method string) int {
	n := 0
	for _, m := range msgs {
		if m.Method == method {
			n++
		}
	}
	return n
}

// wireSession is one raw MCP session to the hub. A session that re-lists
// acts as Claude Code does: on tools/list_changed it sends tools/list (ids
// from relistID on), and it answers pings.
type wireSession interface {
	// call sends a request and returns what arrived for it, in wire order,
	// up to and including its response: over stdio everything on stdout,
	// over HTTP the POST's response stream, with the answer to a re-list
	// it made meanwhile where it read it.
	call(t *testing.T, id int, method, params string) []wireMsg
	notify(t *testing.T, method, params string)
	// end closes the session and returns what arrived outside the calls:
	// over stdio everything after the last response, over HTTP the whole
	// standalone GET stream.
	end(t *testing.T) []wireMsg
}

// wireDeadline bounds each wait for the hub; only a broken hub reaches it.
const wireDeadline = 30 * time.Second

// relistID is the first id of the re-lists a wireSession sends.
const relistID = 1000

// stdioWire serves one session with ServeStdio over pipes.
type stdioWire struct {
	in      *io.PipeWriter
	out     chan wireMsg // closed when stdout ends
	relists bool
	relist  int // re-lists sent
}

func openStdioWire(t *testing.T, h *Gateway, relists bool) wireSession {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := &stdioWire{in: inW, out: make(chan wireMsg, 1000), relists: relists}
	go func() {
		h.hub.ServeStdio(context.Background(), "", inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(w.out)
		sc := bufio.NewScanner(outR)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			var m wireMsg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m.Method = "unparsable: " + sc.Text()
			}
			w.out <- m
		}
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return w
}

func (w *stdioWire) write(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		t.Fatalf("write to the hub's stdin: %v", err)
	}
}

func (w *stdioWire) call(t *testing.T, id int, method, params string) []wireMsg {
	t.Helper()
	w.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	var got []wireMsg
	timeout := time.After(wireDeadline)
	for {
		select {
		case m, ok := <-w.out:
			if !ok {
				t.Fatalf("%s: stdout ended before the response; got %v", method, got)
			}
			got = append(got, m)
			if m.answers(id) {
				return got
			}
			if w.relists && m.Method == toolsListChanged {
				w.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list","params":{}}`, relistID+w.relist))
				w.relist++
			}
			if w.relists && m.Method == "ping" {
				w.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID))
			}
		case <-timeout:
			t.Fatalf("%s: no response in %s; got %v", method, wireDeadline, got)
		}
	}
}

func (w *stdioWire) notify(t *testing.T, method, params string) {
	t.Helper()
	w.write(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params))
}

func (w *stdioWire) end(t *testing.T) []wireMsg {
	t.Helper()
	w.in.Close()
	return drainWire(t, w.out, "stdout did not end %s after stdin")
}

// drainWire collects what ch carries until it is closed, failing the test
// with notEnded (which takes wireDeadline) if that takes longer.
func drainWire(t *testing.T, ch <-chan wireMsg, notEnded string) []wireMsg {
	t.Helper()
	var got []wireMsg
	timeout := time.After(wireDeadline)
	for {
		select {
		case m, ok := <-ch:
			if !ok {
				return got
			}
			got = append(got, m)
		case <-timeout:
			t.Fatalf(notEnded+"; got %v", wireDeadline, got)
		}
	}
}

// httpWire is one session over streamable HTTP, with its standalone GET
// stream open from right after initialization.
type httpWire struct {
	url, version, session string
	get                   chan wireMsg // the GET stream; closed when it ends
	relists               bool
	relist                int // re-lists sent
}

func openHTTPWire(t *testing.T, h *Gateway, version string, relists bool) wireSession {
	srv := httptest.NewServer(h.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	return &httpWire{url: srv.URL + "/mcp", version: version, relists: relists}
}

func (w *httpWire) request(t *testing.T, method, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, w.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if w.session != "" {
		req.Header.Set("Mcp-Session-Id", w.session)
		// The header exists from 2025-06-18 on; older clients send none.
		if w.version >= "2025-06-18" {
			req.Header.Set("Mcp-Protocol-Version", w.version)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, w.url, err)
	}
	return resp
}

func (w *httpWire) call(t *testing.T, id int, method, params string) []wireMsg {
	t.Helper()
	resp := w.request(t, http.MethodPost, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params))
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: HTTP %d: %s", method, resp.StatusCode, b)
	}
	if w.session == "" {
		w.session = resp.Header.Get("Mcp-Session-Id")
	}
	var got []wireMsg
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var m wireMsg
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("%s: JSON answer: %v", method, err)
		}
		got = append(got, m)
	} else {
		for m := range readSSE(resp.Body) {
			got = append(got, m)
			if w.relists && m.Method == toolsListChanged {
				w.relist++
				got = append(got, w.call(t, relistID+w.relist-1, "tools/list", `{}`)...)
			}
			if w.relists && m.Method == "ping" {
				w.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID))
			}
		}
	}
	if len(got) == 0 || !got[len(got)-1].answers(id) {
		t.Fatalf("%s: the POST stream ended without the response last: %v", method, got)
	}
	return got
}

// post sends a notification or a response: the hub accepts it with 202.
func (w *httpWire) post(t *testing.T, msg string) {
	t.Helper()
	resp := w.request(t, http.MethodPost, msg)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("%s: HTTP %d, want 202", msg, resp.StatusCode)
	}
}

func (w *httpWire) notify(t *testing.T, method, params string) {
	t.Helper()
	w.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, params))
	if method == "notifications/initialized" {
		resp := w.request(t, http.MethodGet, "")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: HTTP %d", resp.StatusCode)
		}
		// The SDK has registered the stream once its headers are out.
		// Closing the body ends the stream should the test stop early
		// (before the server's Close, which waits for it).
		t.Cleanup(func() { resp.Body.Close() })
		w.get = make(chan wireMsg, 1000)
		go func() {
			defer close(w.get)
			defer resp.Body.Close()
			for m := range readSSE(resp.Body) {
				w.get <- m
			}
		}()
	}
}

func (w *httpWire) end(t *testing.T) []wireMsg {
	t.Helper()
	resp := w.request(t, http.MethodDelete, "")
	resp.Body.Close()
	return drainWire(t, w.get, "the GET stream did not end %s after DELETE")
}

// readSSE yields the JSON-RPC message of each server-sent event in r.
func readSSE(r io.Reader) func(func(wireMsg) bool) {
	return func(yield func(wireMsg) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		var data bytes.Buffer
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "data:"):
				data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			case line == "" && data.Len() > 0:
				var m wireMsg
				if err := json.Unmarshal(data.Bytes(), &m); err != nil {
					m.Method = "unparsable: " + data.String()
				}
				data.Reset()
				if !yield(m) {
					return
				}
			}
		}
	}
}

// listChangedHub is the SMALL fixture with auto_load_on_call and
// relist_wait, logging at debug to log so a test can wait for the SDK's
// debounced notification to have been handled.
func listChangedHub(t *testing.T, fx *fixture.Servers, log *fixture.Log, relistWait time.Duration) *Gateway {
	t.Helper()
	cfg := fixture.SmallConfig()
	cfg.Discovery.AutoLoadOnCall = true
	w := config.Duration(relistWait)
	cfg.Discovery.RelistWait = &w
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logger := slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h, err := New(ctx, cfg, Options{Hub: hub.Options{Logger: logger, StartupWait: 20 * time.Second, Builtin: fx.Builtin}, OpenStore: openStore})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// debounced counts the SDK's debounced tools/list_changed notifications the
// session's middleware has handled (dropped or sent).
func debounced(log *fixture.Log) int {
	return strings.Count(log.String(), "tools/list_changed: debounced copy")
}

// debouncedSent counts the SDK's debounced notifications the hub sent on
// (not dropped).
func debouncedSent(log *fixture.Log) int {
	return strings.Count(log.String(), "tools/list_changed: debounced copy sent")
}

// wireTransports open a raw session to a hub at a protocol version.
var wireTransports = []struct {
	name string
	open func(t *testing.T, h *Gateway, version string, relists bool) wireSession
}{
	{"stdio", func(t *testing.T, h *Gateway, _ string, relists bool) wireSession {
		return openStdioWire(t, h, relists)
	}},
	{"http", openHTTPWire},
}

// wireVersions are the protocol versions the hub negotiates.
var wireVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

func wireInitialize(t *testing.T, w wireSession, version string) {
	t.Helper()
	got := w.call(t, 1, "initialize", `{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}`)
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	if err := json.Unmarshal(got[len(got)-1].Result, &res); err != nil || res.ProtocolVersion != version {
		t.Fatalf("initialize at %s: negotiated %q (%v)", version, res.ProtocolVersion, err)
	}
	w.notify(t, "notifications/initialized", `{}`)
}

// checkLoaded checks the messages of a call (id) that loaded tool, for a
// client that re-lists (the re-list's id is relist) or not: exactly one
// tools/list_changed, then, for a client that re-lists, the answer to its
// re-list (with the tool) and a ping, then the result.
func checkLoaded(t *testing.T, what string, got []wireMsg, id, relist int, tool string) {
	t.Helper()
	want := []string{toolsListChanged, "response " + strconv.Itoa(id)}
	if relist > 0 {
		want = []string{toolsListChanged, "response " + strconv.Itoa(relist), "ping", "response " + strconv.Itoa(id)}
	}
	var tail []string
	for _, m := range got[max(0, len(got)-len(want)):] {
		tail = append(tail, m.String())
	}
	if countMethod(got, toolsListChanged) != 1 || strings.Join(tail, ", ") != strings.Join(want, ", ") {
		t.Fatalf("%s: got %v; want exactly one %s, and the messages to end with %v", what, got, toolsListChanged, want)
	}
	if relist > 0 && !bytes.Contains(got[len(got)-3].Result, []byte(`"name":"`+tool+`"`)) {
		t.Errorf("%s: the re-list after the notification lacks %s", what, tool)
	}
	if res := got[len(got)-1]; res.Error != nil || bytes.Contains(res.Result, []byte(`"isError":true`)) {
		t.Errorf("%s failed: %s%s", what, res.Error, res.Result)
	}
}

// loadingCalls are the calls that load a tool: search_tools, and with
// auto_load_on_call call_tool and a direct call.
var loadingCalls = []struct {
	name, params, loads string
}{
	{"search_tools", `{"name":"search_tools","arguments":{"tool_names":["math__add"]}}`, "math__add"},
	{"call_tool auto-load", `{"name":"call_tool","arguments":{"name":"math__multiply","arguments":{"a":2,"b":3}}}`, "math__multiply"},
	{"direct call auto-load", `{"name":"weather__get_current","arguments":{"location":"Paris"}}`, "weather__get_current"},
}

// TestToolsListChangedBeforeResult: a call that loads tools gets exactly
// one tools/list_changed, before its result, on the wire: stdout over
// stdio, the call's own POST stream over HTTP. The client re-lists on it
// (as Claude Code does), and the result waits for that re-list's answer,
// a ping after it and relistSettle. Nothing more comes later (no debounced
// duplicate; nothing on the GET stream). At every protocol version the hub
// negotiates.
func TestToolsListChangedBeforeResult(t *testing.T) {
	for _, tr := range wireTransports {
		for _, version := range wireVersions {
			t.Run(tr.name+"/"+version, func(t *testing.T) {
				log := fixture.NewLog(t)
				// Far above a re-list round trip: a result that waited
				// for it by mistake would make the test time out.
				h := listChangedHub(t, fixture.NewServers(), log, wireDeadline)
				w := tr.open(t, h, version, true)
				wireInitialize(t, w, version)
				for i, c := range loadingCalls {
					id := 10 + i
					start := time.Now()
					checkLoaded(t, c.name, w.call(t, id, "tools/call", c.params), id, relistID+i, c.loads)
					if took := time.Since(start); took < relistSettle {
						t.Errorf("%s took %s: the result did not wait relistSettle (%s) after the ping", c.name, took, relistSettle)
					}
					// The SDK's debounced copy has been handled (sent or
					// dropped) before the next call, so a duplicate would
					// show up in that call's messages, or below.
					// (On a loaded machine the SDK's 10 ms timer may split a
					// change into two copies: at least one per call.)
					fixture.Eventually(t, wireDeadline, "the SDK's debounced list_changed", func() bool { return debounced(log) >= i+1 })
				}
				if rest := w.end(t); countMethod(rest, toolsListChanged) != 0 {
					t.Errorf("after the calls (%s): %v; want no more %s", map[bool]string{true: "GET stream", false: "stdout"}[tr.name == "http"], rest, toolsListChanged)
				}
			})
		}
	}
}

// TestToolsListChangedClientIgnoresIt: for a client that does not re-list,
// the first loading call's result waits discovery.relist_wait, the next
// ones not at all; each still gets its notification right before its
// result.
func TestToolsListChangedClientIgnoresIt(t *testing.T) {
	const relistWait = 300 * time.Millisecond
	for _, tr := range wireTransports {
		t.Run(tr.name, func(t *testing.T) {
			log := fixture.NewLog(t)
			h := listChangedHub(t, fixture.NewServers(), log, relistWait)
			const version = "2025-11-25"
			w := tr.open(t, h, version, false)
			wireInitialize(t, w, version)
			for i, c := range loadingCalls {
				id := 10 + i
				start := time.Now()
				checkLoaded(t, c.name, w.call(t, id, "tools/call", c.params), id, 0, c.loads)
				if took := time.Since(start); i == 0 && took < relistWait {
					t.Errorf("%s took %s: the first result did not wait relist_wait (%s) for the re-list", c.name, took, relistWait)
				}
			}
			if n := strings.Count(log.String(), "gave up waiting for the client's re-list"); n != 1 {
				t.Errorf("the hub gave up waiting for a re-list %d times, want once (the first call; then it knows)", n)
			}
			w.end(t)
		})
	}
}

// gateListChanged holds back an upstream fixture server's
// tools/list_changed until release is closed, so that several changes reach
// the hub as one.
func gateListChanged(s *mcp.Server, release <-chan struct{}) {
	s.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == toolsListChanged {
				<-release
			}
			return next(ctx, method, req)
		}
	})
}

// TestToolsListChangedUpstreamDebounced: a change the client did not cause
// (an upstream adds three tools and removes one) keeps the SDK's debounce:
// one notification for the lot, sent by the SDK's timer, over HTTP on the
// GET stream and not on a call's POST stream. A search right before it
// still gets its own notification before its result.
func TestToolsListChangedUpstreamDebounced(t *testing.T) {
	for _, tr := range wireTransports {
		t.Run(tr.name, func(t *testing.T) {
			log := fixture.NewLog(t)
			fx := fixture.NewServers()
			h := listChangedHub(t, fx, log, wireDeadline)
			const version = "2025-11-25"
			w := tr.open(t, h, version, true)
			wireInitialize(t, w, version)
			checkLoaded(t, "search_tools", w.call(t, 10, "tools/call", loadingCalls[0].params), 10, relistID, loadingCalls[0].loads)
			// The search's change comes back from the SDK's timer as one
			// debounced copy (two, when load splits it), which is dropped.
			fixture.Eventually(t, wireDeadline, "the SDK's debounced copy of the search's change", func() bool { return debounced(log) >= 1 })

			release := make(chan struct{})
			gateListChanged(fx.Server("clock"), release)
			for _, name := range []string{"a", "b", "c"} {
				fx.AddTool("clock", fixture.Tool{Name: "extra_" + name, Description: "Extra " + name + ".", Schema: `{"type":"object"}`})
			}
			fx.RemoveTools("clock", "now")
			close(release)
			// Usually one for the lot; on a loaded machine the SDK's 10 ms
			// timer may split the burst, so at least one.
			fixture.Eventually(t, wireDeadline, "the SDK's debounced notification of the upstream change", func() bool { return debouncedSent(log) >= 1 })
			list := w.call(t, 11, "tools/list", `{}`)
			res := string(list[len(list)-1].Result)
			if !strings.Contains(res, `"clock__extra_c"`) || strings.Contains(res, `"clock__now"`) {
				t.Errorf("tools/list after the upstream change: %s", res)
			}
			rest := w.end(t)
			// Counted once the session has ended: a second debounced
			// notification of a split burst may go out after tools/list.
			upstreamNotes := debouncedSent(log)
			if tr.name == "http" {
				if countMethod(list, toolsListChanged) != 0 || countMethod(rest, toolsListChanged) != upstreamNotes {
					t.Errorf("HTTP: tools/list POST %v, GET stream %v; want the upstream change's %d debounced %s on the GET stream only", list, rest, upstreamNotes, toolsListChanged)
				}
			} else if n := countMethod(list, toolsListChanged) + countMethod(rest, toolsListChanged); n != upstreamNotes {
				t.Errorf("stdio: %d %s after the upstream change (%v then %v), want its %d debounced ones", n, toolsListChanged, list, rest, upstreamNotes)
			}
			if dropped := strings.Count(log.String(), "debounced copy dropped"); dropped < 1 || strings.Count(log.String(), "sent before the result") != 1 {
				t.Errorf("the search's debounced copy dropped %d times, want it dropped (once, twice when split); the upstream change must be sent only by the SDK's timer:\n%s", dropped, log)
			}
		})
	}
}

// TestLoadedToolsAlwaysLoad: a tool a session loads (by search_tools,
// call_tool or a direct call with auto_load_on_call) is listed with
// _meta["anthropic/alwaysLoad"]: true merged into the upstream's own _meta,
// on the wire, over stdio and HTTP; a tool the session has not loaded is
// not listed at all, and the upstream's keys survive.
func TestLoadedToolsAlwaysLoad(t *testing.T) {
	t.Parallel()
	url := fixture.RawMCPServer(t, `[
		{"name":"found","inputSchema":{"type":"object"},"_meta":{"vendor/a":1,"vendor/b":{"x":"y"}}},
		{"name":"via_call_tool","inputSchema":{"type":"object"},"_meta":{"vendor/a":2}},
		{"name":"direct","inputSchema":{"type":"object"}},
		{"name":"never","inputSchema":{"type":"object"},"_meta":{"vendor/a":3}}
	]`)
	cfg := fixture.Config(fixture.Entry("raw", config.Upstream{URL: url}))
	cfg.Discovery = config.Discovery{Enabled: true, DeferAll: true, AutoLoadOnCall: true}
	h, _ := agHub(t, cfg, hub.Options{})
	loads := []struct{ params, tool, upstreamMeta string }{
		{`{"name":"search_tools","arguments":{"tool_names":["raw__found"]}}`, "raw__found", `{"vendor/a":1,"vendor/b":{"x":"y"}}`},
		{`{"name":"call_tool","arguments":{"name":"raw__via_call_tool","arguments":{}}}`, "raw__via_call_tool", `{"vendor/a":2}`},
		{`{"name":"raw__direct","arguments":{}}`, "raw__direct", `{}`},
	}
	for _, tr := range wireTransports {
		t.Run(tr.name, func(t *testing.T) {
			w := tr.open(t, h, "2025-11-25", true)
			wireInitialize(t, w, "2025-11-25")
			for i, l := range loads {
				id := 10 + i
				checkLoaded(t, l.tool, w.call(t, id, "tools/call", l.params), id, relistID+i, l.tool)
			}
			got := w.call(t, 20, "tools/list", `{}`)
			var list struct {
				Tools []struct {
					Name string         `json:"name"`
					Meta map[string]any `json:"_meta"`
				} `json:"tools"`
			}
			if err := json.Unmarshal(got[len(got)-1].Result, &list); err != nil {
				t.Fatalf("tools/list: %v (%v)", err, got)
			}
			metas := map[string]map[string]any{}
			for _, tl := range list.Tools {
				metas[tl.Name] = tl.Meta
			}
			if _, ok := metas["raw__never"]; ok {
				t.Errorf("raw__never is listed before the session loaded it")
			}
			for _, l := range loads {
				meta, ok := metas[l.tool]
				if !ok {
					t.Errorf("%s is not listed after it was loaded", l.tool)
					continue
				}
				var want map[string]any
				json.Unmarshal([]byte(l.upstreamMeta), &want)
				want[alwaysLoadKey] = true
				if g, w := fixture.JSON(t, meta), fixture.JSON(t, want); g != w {
					t.Errorf("%s _meta = %s, want %s", l.tool, g, w)
				}
			}
			w.end(t)
		})
	}
}
