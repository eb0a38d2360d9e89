package gateway

// Security and bad-input tests over real sockets and pipes: bearer auth,
// Origin/Host checks, request size limits, malformed JSON-RPC and wrong
// arguments from clients, and secrets kept out of logs, errors and
// /healthz. Helpers are prefixed "sec" so they never clash with other
// test files of the package.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func secHub(t testing.TB, cfg *config.Config) (*Gateway, *fixture.Log) {
	t.Helper()
	lg := &fixture.Log{}
	log := slog.New(slog.NewTextHandler(lg, nil))
	h, err := New(context.Background(), cfg, Options{Hub: hub.Options{Logger: log, StartupWait: 20 * time.Second, Builtin: builtins(cfg, log)}, OpenStore: openStore})
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

// secRawSession serves a hub for cfg over HTTP and opens a session on it for
// raw POSTs: the URL of /mcp and the headers that name the session.
func secRawSession(t testing.TB, cfg *config.Config) (url string, headers map[string]string) {
	t.Helper()
	h, _ := secHub(t, cfg)
	srv := httptest.NewServer(h.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	cs, err := fixture.HTTPClient(t, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL + "/mcp", map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": cs.InitializeResult().ProtocolVersion}
}

// TestSecurityBearerAuth: with auth.tokens, /mcp, /mcp/<toolset> and the
// extra handlers (/v1/chat) need a valid bearer token; /healthz does not.
func TestSecurityBearerAuth(t *testing.T) {
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-tools", "a"))
	cfg.Auth.Tokens = []config.Token{{Value: "tok-first-1234"}, {Value: "tok-second-5678"}}
	cfg.Toolsets = map[string]*config.Toolset{"only": {Servers: map[string]*config.ToolSelection{"fx": {All: true}}}}
	h, _ := secHub(t, cfg)
	chat := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "chat ok") })
	srv := httptest.NewServer(h.HTTPHandler(map[string]http.Handler{"/v1/chat": chat}))
	defer srv.Close()

	for _, path := range []string{"/mcp", "/mcp/only", "/v1/chat"} {
		for name, auth := range map[string]string{"none": "", "wrong": "Bearer nope", "basic": "Basic dG9rLWZpcnN0LTEyMzQ=", "prefix": "Bearer tok-first-123"} {
			hdr := map[string]string{}
			if auth != "" {
				hdr["Authorization"] = auth
			}
			resp := fixture.Post(t, srv.URL+path, fixture.RawInitialize, hdr)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s with %s auth: status %d, want 401", path, name, resp.StatusCode)
			}
			if got := resp.Header.Get("WWW-Authenticate"); !strings.HasPrefix(got, "Bearer") {
				t.Errorf("%s with %s auth: WWW-Authenticate = %q", path, name, got)
			}
		}
	}
	// Either token works, the scheme is case-insensitive.
	for _, auth := range []string{"Bearer tok-first-1234", "bearer tok-second-5678"} {
		cs, err := fixture.HTTPClient(t, srv.URL+"/mcp", map[string]string{"Authorization": auth})
		if err != nil {
			t.Fatalf("connect with %q: %v", auth, err)
		}
		if _, err := cs.ListTools(fixture.Context(t), nil); err != nil {
			t.Errorf("tools/list with %q: %v", auth, err)
		}
	}
	if _, err := fixture.HTTPClient(t, srv.URL+"/mcp", nil); err == nil {
		t.Error("an MCP client without a token connected")
	}
	resp := fixture.Post(t, srv.URL+"/v1/chat", "{}", map[string]string{"Authorization": "Bearer tok-first-1234"})
	if b, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 || string(b) != "chat ok" {
		t.Errorf("/v1/chat with a token: %d %q", resp.StatusCode, b)
	}
	// /healthz is open, and tells nothing secret.
	hresp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer hresp.Body.Close()
	body, _ := io.ReadAll(hresp.Body)
	if hresp.StatusCode != 200 || strings.Contains(string(body), "tok-") {
		t.Errorf("/healthz: %d %s", hresp.StatusCode, body)
	}
}

// TestSecurityOriginAndHost: DNS-rebinding protection. A foreign Origin is
// refused unless allowed; a loopback listener refuses a foreign Host.
func TestSecurityOriginAndHost(t *testing.T) {
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-tools", "a"))
	cfg.Auth.AllowedOrigins = []string{"https://app.example"}
	h, _ := secHub(t, cfg)
	chat := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "chat ok") })
	srv := httptest.NewServer(h.HTTPHandler(map[string]http.Handler{"/v1/chat": chat}))
	defer srv.Close()
	cases := []struct {
		path    string
		headers map[string]string
		want    int
	}{
		{"/mcp", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"/v1/chat", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"/mcp", map[string]string{"Origin": "https://app.example"}, http.StatusOK},
		{"/mcp", map[string]string{"Origin": "http://localhost:3000"}, http.StatusOK},
		{"/mcp", map[string]string{"Origin": "http://127.0.0.1:5173"}, http.StatusOK},
		{"/mcp", map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{"/mcp", map[string]string{"Host": "evil.example:80"}, http.StatusForbidden},
		{"/v1/chat", map[string]string{"Host": "rebind.attacker.example"}, http.StatusForbidden},
		{"/mcp", map[string]string{"Host": "localhost"}, http.StatusOK},
		{"/v1/chat", nil, http.StatusOK},
	}
	for _, c := range cases {
		resp := fixture.Post(t, srv.URL+c.path, fixture.RawInitialize, c.headers)
		if resp.StatusCode != c.want {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("%s %v: status %d (%s), want %d", c.path, c.headers, resp.StatusCode, strings.TrimSpace(string(b)), c.want)
		}
	}
}

// TestSecurityOversizedHTTP: a body over max_request_bytes gets 413, and
// the hub keeps serving.
func TestSecurityOversizedHTTP(t *testing.T) {
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-tools", "a"))
	cfg.MaxRequestBytes = 64 << 10
	h, _ := secHub(t, cfg)
	srv := httptest.NewServer(h.HTTPHandler(nil))
	defer srv.Close()
	cs, err := fixture.HTTPClient(t, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	big := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fx__a","arguments":{"pad":"` + strings.Repeat("x", 100<<10) + `"}}}`
	resp := fixture.Post(t, srv.URL+"/mcp", big, map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": cs.InitializeResult().ProtocolVersion})
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		b, _ := io.ReadAll(resp.Body)
		t.Errorf("oversized body: status %d (%s), want 413", resp.StatusCode, b)
	}
	// A new session with an oversized initialize too.
	if resp := fixture.Post(t, srv.URL+"/mcp", big, nil); resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized first request: status %d, want 413", resp.StatusCode)
	}
	// The session that sent it still works, and just under the limit is fine.
	res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "fx__a", Arguments: map[string]any{"pad": strings.Repeat("y", 60<<10)}})
	if err != nil || res.IsError {
		t.Errorf("call under the limit after an oversized one: %v %v", err, res)
	}
}

// TestSecurityBadInputHTTP: bad requests over HTTP get 4xx or JSON-RPC
// errors and do not disturb another session.
func TestSecurityBadInputHTTP(t *testing.T) {
	h, _ := secHub(t, fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-features")))
	srv := httptest.NewServer(h.HTTPHandler(nil))
	defer srv.Close()
	good, err := fixture.HTTPClient(t, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := fixture.HTTPClient(t, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	hdr := map[string]string{"Mcp-Session-Id": bad.ID(), "Mcp-Protocol-Version": bad.InitializeResult().ProtocolVersion}
	for name, body := range map[string]string{
		"not JSON":    `{"jsonrpc":"2.0","id":5,"method":`,
		"not JSONRPC": `[1,2,3]`,
		"bad version": `{"jsonrpc":"1.0","id":6,"method":"tools/list"}`,
	} {
		resp := fixture.Post(t, srv.URL+"/mcp", body, hdr)
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			b, _ := io.ReadAll(resp.Body)
			t.Errorf("%s: status %d (%s), want 4xx", name, resp.StatusCode, b)
		}
	}
	// Wrong argument types, unknown tools, unknown methods: errors on that
	// session, while the other one's calls keep working.
	ctx := fixture.Context(t)
	if _, err := bad.CallTool(ctx, &mcp.CallToolParams{Name: "fx__nope"}); err == nil || !strings.Contains(err.Error(), "Unknown tool") {
		t.Errorf("unknown tool: %v", err)
	}
	res, err := bad.CallTool(ctx, &mcp.CallToolParams{Name: "fx__sleep", Arguments: map[string]any{"ms": "soon"}})
	if err == nil && !res.IsError {
		t.Errorf("arguments not matching the schema: no error")
	}
	for i := range 3 {
		res, err := good.CallTool(ctx, &mcp.CallToolParams{Name: "fx__sleep", Arguments: map[string]any{"ms": 1}})
		if err != nil || res.IsError {
			t.Errorf("good session call %d: %v %v", i, err, res)
		}
	}
}

// TestSecuritySecretsNotInErrorsOrHealth: errors returned to clients and
// /healthz's last_error never carry header values, env values, URL
// credentials or ${VAR} expansions.
func TestSecuritySecretsNotInErrorsOrHealth(t *testing.T) {
	const token, key, varSecret = "hdr-tok-8c1e55", "qry-key-2b7d90", "var-exp-61aa3f"
	t.Setenv("SEC_TEST_SECRET", varSecret)
	yaml := `
servers:
  remote:
    url: http://127.0.0.1:1/mcp?api_key=` + key + `&v=${SEC_TEST_SECRET}
    headers: {Authorization: "Bearer ` + token + `"}
  fx:
    command: ` + fixture.Build(t) + `
    args: [-name, fx, -tools, a]
restart: {initial_backoff: 50ms, max_backoff: 100ms, unhealthy_after: 2, cooldown: 1m}
`
	cfg, err := config.Parse("hub.yaml", []byte(yaml), builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	h, lg := secHub(t, cfg)
	waitFor(t, "remote unhealthy", func() bool { return h.hub.Upstreams()[0].State == upstream.StateUnhealthy })
	srv := httptest.NewServer(h.HTTPHandler(nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	health, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// A call to a tool of the down server: the error text goes to the client.
	cs, err := h.hub.Connect(fixture.Context(t), "", mcp.NewClient(&mcp.Implementation{Name: "c"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "remote__anything"})
	var callText string
	if err != nil {
		callText = err.Error()
	} else {
		b, _ := json.Marshal(res)
		callText = string(b)
	}
	if !strings.Contains(callText, "remote") {
		t.Errorf("call to the down server: %s", callText)
	}
	for where, text := range map[string]string{"/healthz": string(health), "call result": callText, "log": lg.String()} {
		for _, s := range []string{token, key, varSecret} {
			if strings.Contains(text, s) {
				t.Errorf("%s leaks %q:\n%s", where, s, text)
			}
		}
	}
	if !strings.Contains(string(health), "unhealthy") || !strings.Contains(string(health), redact.Redacted) {
		t.Errorf("/healthz = %s, want remote unhealthy with a redacted last_error", health)
	}
}

// TestEveryPathGuarded: every path of the HTTP handler, the team-deployment
// ones included, refuses a DNS-rebinding Host or a foreign Origin before
// anything else, and the ones behind auth answer 401 without a token.
func TestEveryPathGuarded(t *testing.T) {
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-tools", "a"))
	cfg.Auth.Tokens = []config.Token{{Name: "ops", Value: "tok-every-1234"}}
	h, _ := secHub(t, cfg)
	ui := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hub.PrincipalFrom(r.Context()) == nil {
			io.WriteString(w, "login form")
			return
		}
		io.WriteString(w, "dashboard")
	})
	srv := httptest.NewServer(h.HTTPHandler(map[string]http.Handler{UIPath: ui, UIPath + "/": ui}))
	defer srv.Close()
	const tok = "Bearer tok-every-1234"
	paths := []string{"/mcp", "/metrics", UIPath, UIPath + "/search", "/healthz", wellKnownPRM, wellKnownPRM + "/mcp"}
	for _, path := range paths {
		for _, c := range []struct {
			name    string
			headers map[string]string
			want    int
		}{
			{"rebinding Host", map[string]string{"Authorization": tok, "Host": "rebind.attacker.example"}, http.StatusForbidden},
			{"foreign Origin", map[string]string{"Authorization": tok, "Origin": "https://evil.example"}, http.StatusForbidden},
		} {
			if resp := fixture.Post(t, srv.URL+path, fixture.RawInitialize, c.headers); resp.StatusCode != c.want {
				t.Errorf("%s, %s: status %d, want %d", path, c.name, resp.StatusCode, c.want)
			}
		}
	}
	for path, want := range map[string]string{"/mcp": "401", "/metrics": "401", UIPath: "login form", "/healthz": `{"status":`} {
		resp := fixture.Post(t, srv.URL+path, fixture.RawInitialize, nil)
		b, _ := io.ReadAll(resp.Body)
		if got := fmt.Sprint(resp.StatusCode); got != want && !strings.HasPrefix(string(b), want) {
			t.Errorf("%s without a token: %s %.80q, want %s", path, resp.Status, b, want)
		}
		if path == "/healthz" && strings.Contains(string(b), `"servers"`) {
			t.Errorf("/healthz without a token tells the servers: %s", b)
		}
	}
}
