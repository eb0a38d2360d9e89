package gateway

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// modernToolsList POSTs a 2026-07-28 tools/list to url and returns the
// status and body.
func modernToolsList(t *testing.T, url string) (int, string) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"` + mcp.MetaKeyProtocolVersion + `":"` + hub.ModernProtocol +
		`","` + mcp.MetaKeyClientInfo + `":{"name":"t","version":"0"},"` + mcp.MetaKeyClientCapabilities + `":{}}}}`
	resp := fixture.Post(t, url, body, map[string]string{"Mcp-Protocol-Version": hub.ModernProtocol, "Mcp-Method": "tools/list"})
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// sessionLimitGateway serves a gateway over HTTP with protocol.modern on,
// toolset t, and max_sessions and session_idle_timeout as given.
func sessionLimitGateway(t *testing.T, maxSessions int, idle time.Duration) (*Gateway, string) {
	t.Helper()
	lu := &listenUpstream{}
	cfg := fixture.NewConfig(config.Discovery{}, fixture.ServerEntry("res"))
	on := true
	cfg.Protocol = config.Protocol{Modern: &on}
	cfg.MaxSessions = maxSessions
	cfg.SessionIdleTimeout = config.Duration(idle)
	cfg.Toolsets = map[string]*config.Toolset{"t": {Servers: map[string]*config.ToolSelection{"res": {All: true}}}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := New(ctx, cfg, Options{Hub: hub.Options{Logger: slog.New(slog.DiscardHandler), StartupWait: 20 * time.Second,
		Builtin: func(string, map[string]string) (*mcp.Server, error) { return lu.server(), nil }}, OpenStore: openStore})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.HTTPHandler(nil))
	t.Cleanup(func() { srv.Close(); g.Close() })
	return g, srv.URL
}

// TestSessionLimitBothEras: max_sessions is one count for the sessions of
// both eras: with 2, a shared modern Session and a legacy session fill it,
// and a third of either era is refused (503, naming max_sessions) until
// one ends.
func TestSessionLimitBothEras(t *testing.T) {
	g, url := sessionLimitGateway(t, 2, time.Hour)
	if status, body := modernToolsList(t, url+"/mcp"); status != http.StatusOK {
		t.Fatalf("a modern request: %d %s", status, body)
	}
	resp := fixture.Post(t, url+"/mcp", fixture.RawInitialize, nil)
	legacy := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || legacy == "" {
		t.Fatalf("a legacy initialize with one modern session open: %d", resp.StatusCode)
	}
	if resp := fixture.Post(t, url+"/mcp", fixture.RawInitialize, nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a second legacy session, with a modern one open and max_sessions 2: %d, want 503", resp.StatusCode)
	}
	if status, body := modernToolsList(t, url+"/mcp/t"); status != http.StatusServiceUnavailable || !strings.Contains(body, "max_sessions") {
		t.Errorf("a modern request of another toolset, with a legacy session open and max_sessions 2: %d %s, want 503 naming max_sessions", status, body)
	}
	if n := g.slots.Open(); n != 2 {
		t.Errorf("%d sessions counted open, want 2", n)
	}
	// The legacy session ends: its slot serves the other toolset's modern
	// requests.
	req, _ := http.NewRequest(http.MethodDelete, url+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", legacy)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", err, resp)
	}
	waitFor(t, "the legacy session's slot to free", func() bool { return g.slots.Open() == 1 })
	if status, body := modernToolsList(t, url+"/mcp/t"); status != http.StatusOK {
		t.Errorf("a modern request of another toolset after the legacy session ended: %d %s", status, body)
	}
}

// TestSessionLimitIdleModern: a shared modern Session idle past
// session_idle_timeout gives its slot to a new legacy session, which then
// holds it against modern requests.
func TestSessionLimitIdleModern(t *testing.T) {
	g, url := sessionLimitGateway(t, 1, 200*time.Millisecond)
	if status, body := modernToolsList(t, url+"/mcp"); status != http.StatusOK {
		t.Fatalf("a modern request: %d %s", status, body)
	}
	waitFor(t, "a legacy session to take the idle modern Session's slot", func() bool {
		return fixture.Post(t, url+"/mcp", fixture.RawInitialize, nil).StatusCode == http.StatusOK
	})
	if n := g.slots.Open(); n != 1 {
		t.Errorf("%d sessions counted open, want 1", n)
	}
	// The modern Session was ended for it: a new one has no slot.
	if status, body := modernToolsList(t, url+"/mcp"); status != http.StatusServiceUnavailable {
		t.Errorf("a modern request while the legacy session holds the one slot: %d %s, want 503", status, body)
	}
}
