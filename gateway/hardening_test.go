package gateway

// Hardening tests of the hub's own boundaries: panics contained per
// request, secrets out of every error a client sees, results over
// max_result_bytes, the HTTP server's limits, and list_changed storms.
// Helpers are prefixed "hd".

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// hdServer serves h with NewHTTPServer on 127.0.0.1 and returns its base
// URL.
func hdServer(t *testing.T, h *Gateway) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := h.NewHTTPServer(nil)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// TestHealthzGuarded: /healthz refuses a foreign Host like /mcp does, and
// with auth.tokens set it tells a request without a token only the status.
func TestHealthzGuarded(t *testing.T) {
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-tools", "a"))
	cfg.Auth.Tokens = []config.Token{{Value: "tok-health-4242"}}
	h, _ := secHub(t, cfg)
	base := hdServer(t, h)
	cases := []struct {
		name    string
		headers map[string]string
		status  int
		body    func(string) bool
	}{
		{"foreign Host", map[string]string{"Host": "rebind.attacker.example"}, http.StatusForbidden, nil},
		{"foreign Origin", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden, nil},
		{"no token", nil, http.StatusOK, func(b string) bool { return b == "{\"status\":\"ok\"}\n" }},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, http.StatusOK, func(b string) bool { return b == "{\"status\":\"ok\"}\n" }},
		{"token", map[string]string{"Authorization": "Bearer tok-health-4242"}, http.StatusOK,
			func(b string) bool { return strings.Contains(b, `"servers":[{"name":"fx"`) }},
	}
	for _, tc := range cases {
		status, body, _ := fixture.Get(t, base+"/healthz", tc.headers)
		if status != tc.status || (tc.body != nil && !tc.body(body)) {
			t.Errorf("%s: %d %q", tc.name, status, body)
		}
	}
}

// hdInit POSTs an initialize without a session id and returns the answer.
func hdInit(t *testing.T, url string) *http.Response {
	t.Helper()
	return fixture.Post(t, url, fixture.RawInitialize, nil)
}

// TestHTTPSessionLimits: max_sessions refuses a new session with 503 and
// Retry-After, and a slot frees when a session ends; a session is only
// built for an initialize.
func TestHTTPSessionLimits(t *testing.T) {
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-tools", "a"))
	cfg.MaxSessions = 2
	h, _ := secHub(t, cfg)
	url := hdServer(t, h) + "/mcp"

	// A session the hub makes takes the next number (hub.Session.ID):
	// a probe counts those made since, itself aside.
	probes := int64(0)
	built := func() int64 {
		s, err := h.hub.NewSession(hub.SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		probes++
		return s.ID() - probes
	}
	start := built()
	for name, body := range map[string]string{
		"tools/list":   `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		"notification": `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		"batch":        `[` + fixture.RawInitialize + `]`,
		"garbage":      `{"jsonrpc":"2.0","id":1,"method":"initialize"`,
		"not JSON-RPC": `{"initialize": true}`,
		"no params":    `{"jsonrpc":"2.0","id":1,"method":"initialize"}`,
		"no version":   `{"id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`,
	} {
		resp := fixture.Post(t, url, body, nil)
		b, _ := io.ReadAll(resp.Body)
		if resp.Header.Get("Mcp-Session-Id") != "" || (name != "notification" && !strings.Contains(string(b), `"error"`)) {
			t.Errorf("%s without a session id: %d %s, want an error and no session", name, resp.StatusCode, b)
		}
	}
	if n := built() - start; n != 0 || h.slots.Open() != 0 {
		t.Errorf("requests that are not an initialize built %d sessions (%d open)", n, h.slots.Open())
	}

	ids := []string{}
	for range 2 {
		resp := hdInit(t, url)
		io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %d", resp.StatusCode)
		}
		ids = append(ids, resp.Header.Get("Mcp-Session-Id"))
	}
	resp := hdInit(t, url)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" ||
		!strings.Contains(string(body), "max_sessions") || !strings.Contains(string(body), `"jsonrpc":"2.0"`) {
		t.Errorf("a third session: %d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	// Ending a session frees its slot.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", ids[0])
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	waitFor(t, "the slot to free", func() bool { return h.slots.Open() == 1 })
	if resp := hdInit(t, url); resp.StatusCode != http.StatusOK {
		t.Errorf("a session after one ended: %d", resp.StatusCode)
	}
}

// TestHTTPSessionIdleTimeout: sessions that are initialized and then
// abandoned end after session_idle_timeout, and free their slots.
func TestHTTPSessionIdleTimeout(t *testing.T) {
	t.Parallel()
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-tools", "a"))
	cfg.SessionIdleTimeout = config.Duration(300 * time.Millisecond)
	h, _ := secHub(t, cfg)
	url := hdServer(t, h) + "/mcp"
	for range 5 {
		if resp := hdInit(t, url); resp.StatusCode != http.StatusOK {
			t.Fatalf("initialize: %d", resp.StatusCode)
		}
	}
	waitFor(t, "idle sessions to end", func() bool { return h.slots.Open() == 0 })
}

// TestHTTPServerTimeouts: a body that does not arrive in BodyReadTimeout
// ends its connection; a tool call longer than that, and the session's
// event stream, are not cut; an idle keep-alive connection is closed after
// IdleTimeout; headers over MaxHeaderBytes get 431.
func TestHTTPServerTimeouts(t *testing.T) {
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-features"))
	cfg.HTTP = config.HTTPLimits{BodyReadTimeout: config.Duration(300 * time.Millisecond), IdleTimeout: config.Duration(300 * time.Millisecond), MaxHeaderBytes: 8 << 10}
	h, _ := secHub(t, cfg)
	base := hdServer(t, h)
	addr := strings.TrimPrefix(base, "http://")

	t.Run("slow body", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{\"jsonrpc\":", addr)
		begin := time.Now()
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		io.Copy(io.Discard, conn) // until the server closes the connection
		if took := time.Since(begin); took > 10*time.Second {
			t.Errorf("a stalled body held its connection for %v", took)
		}
	})
	t.Run("long call and stream", func(t *testing.T) {
		cs, err := fixture.HTTPClient(t, base+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		// The event stream of the session, as a client holds it.
		req, _ := http.NewRequest(http.MethodGet, base+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", cs.InitializeResult().ProtocolVersion)
		stream, err := http.DefaultClient.Do(req)
		if err != nil || stream.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %v %v", err, stream)
		}
		defer stream.Body.Close()
		ended := make(chan error, 1)
		go func() { _, err := io.Copy(io.Discard, stream.Body); ended <- err }()
		res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "fx__sleep", Arguments: map[string]any{"ms": 1200}})
		if err != nil || res.IsError {
			t.Fatalf("a call 4x longer than the body timeout: %v %+v", err, res)
		}
		select {
		case err := <-ended:
			t.Errorf("the event stream ended during the call: %v", err)
		default:
		}
	})
	t.Run("idle connection", func(t *testing.T) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		begin := time.Now()
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := r.ReadByte(); err != io.EOF {
			t.Errorf("idle keep-alive connection: %v, want closed by the server", err)
		}
		if took := time.Since(begin); took > 10*time.Second {
			t.Errorf("idle connection closed after %v", took)
		}
	})
	t.Run("large headers", func(t *testing.T) {
		// Over a raw connection: the server answers 431 before it has read
		// all 64 KiB, and an http.Client whose write then fails (broken
		// pipe) may report that instead of the answer.
		conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		go fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\nX-Big: %s\r\n\r\n", strings.TrimPrefix(base, "http://"), strings.Repeat("h", 64<<10))
		conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("64 KiB of headers: no answer: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("64 KiB of headers: %d, want 431", resp.StatusCode)
		}
	})
}
