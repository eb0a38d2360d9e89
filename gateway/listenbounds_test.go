package gateway

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// listenUpstream is a resource server with a template any id matches,
// counting the URIs the hub holds subscribed at it.
type listenUpstream struct{ active atomic.Int64 }

func (lu *listenUpstream) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "res", Version: "test"}, &mcp.ServerOptions{
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { lu.active.Add(1); return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { lu.active.Add(-1); return nil },
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "item", URITemplate: "res://item/{id}"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item"}}}, nil
		})
	return s
}

// listenGateway serves a gateway over HTTP with the res upstream,
// protocol.modern on, tokens alice and bob, and the given limits.
func listenGateway(t *testing.T, lu *listenUpstream, maxURIs, perPrincipal int, rate *config.RateLimit) string {
	t.Helper()
	cfg := fixture.NewConfig(config.Discovery{}, fixture.ServerEntry("res"))
	on := true
	cfg.Protocol = config.Protocol{Modern: &on, MaxListenURIs: maxURIs}
	cfg.MaxSubscriptionsPerPrincipal = perPrincipal
	cfg.Auth.Tokens = []config.Token{{Name: "alice", Value: "alice-secret-token-0123456789"}, {Name: "bob", Value: "bob-secret-token-0123456789"}}
	cfg.Auth.RateLimit = rate
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := New(ctx, cfg, Options{Hub: hub.Options{Logger: slog.New(slog.DiscardHandler), StartupWait: 20 * time.Second,
		Builtin: func(string, map[string]string) (*mcp.Server, error) { return lu.server(), nil }}, OpenStore: openStore})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.HTTPHandler(nil))
	t.Cleanup(func() { srv.Close(); g.Close() })
	return srv.URL
}

// listenAnswer is how a subscriptions/listen POST was answered: the
// HTTP status, and the JSON-RPC error or the acknowledgement that opened
// the stream.
type listenAnswer struct {
	status int
	err    string // the JSON-RPC error's message, or the refusal's body
	acked  bool
}

// listen POSTs a 2026-07-28 subscriptions/listen for uris as who, and
// reads until the stream is acknowledged or the request answered; an
// acknowledged stream stays open until the test ends.
func listen(t *testing.T, url, who string, uris []string) listenAnswer {
	t.Helper()
	return listenWith(t, url, who, uris, nil)
}

// listenWith is listen with more headers (they win).
func listenWith(t *testing.T, url, who string, uris []string, headers map[string]string) listenAnswer {
	t.Helper()
	params := map[string]any{
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    hub.ModernProtocol,
			mcp.MetaKeyClientInfo:         map[string]string{"name": "listen-test", "version": "0"},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		},
		"notifications": map[string]any{"resourceSubscriptions": uris},
	}
	if headers["Mcp-Session-Id"] != "" {
		delete(params, "_meta") // a legacy session's request
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": params})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/mcp", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", hub.ModernProtocol)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("Authorization", "Bearer "+who+"-secret-token-0123456789")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	ans := listenAnswer{status: resp.StatusCode}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		ans.err = string(b)
		return ans
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := strings.TrimPrefix(sc.Text(), "data: ")
		var msg struct {
			Method string `json:"method"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal([]byte(line), &msg) != nil {
			continue
		}
		switch {
		case msg.Error != nil:
			ans.err = msg.Error.Message
			return ans
		case msg.Method == "notifications/subscriptions/acknowledged":
			ans.acked = true
			return ans
		}
	}
	t.Fatalf("the listen stream ended without an answer: %v", sc.Err())
	return ans
}

func items(from, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("res://item/%d", from+i)
	}
	return out
}

// TestListenBounds: one subscriptions/listen may name at most
// protocol.max_listen_uris URIs, one principal may hold at most
// max_subscriptions_per_principal subscriptions, past either only that
// request fails (with an error naming the limit, and nothing left
// subscribed upstream), and other principals are not held to it.
func TestListenBounds(t *testing.T) {
	lu := &listenUpstream{}
	url := listenGateway(t, lu, 5, 8, nil)

	if a := listen(t, url, "alice", items(0, 6)); a.acked || !strings.Contains(a.err, "protocol.max_listen_uris") {
		t.Fatalf("a listen of 6 URIs past max_listen_uris 5: %+v, want an error naming the limit", a)
	}
	if n := lu.active.Load(); n != 0 {
		t.Fatalf("%d URIs subscribed upstream after a refused listen, want 0", n)
	}
	if a := listen(t, url, "alice", items(0, 5)); !a.acked {
		t.Fatalf("a listen of 5 URIs: %+v, want it acknowledged", a)
	}
	// 5 held; 4 more would make 9, past 8.
	if a := listen(t, url, "alice", items(100, 4)); a.acked || !strings.Contains(a.err, "max_subscriptions_per_principal") {
		t.Fatalf("alice's second listen past max_subscriptions_per_principal: %+v, want an error naming the limit", a)
	}
	if n := lu.active.Load(); n != 5 {
		t.Fatalf("%d URIs subscribed upstream, want alice's 5 (the refused listen's undone)", n)
	}
	if a := listen(t, url, "alice", items(100, 3)); !a.acked {
		t.Fatalf("alice's listen of 3 more, 8 in all: %+v, want it acknowledged", a)
	}
	if a := listen(t, url, "bob", items(200, 5)); !a.acked {
		t.Fatalf("bob's listen while alice holds her most: %+v, want it acknowledged", a)
	}

	// A legacy session subscribes with resources/subscribe, one URI a
	// request: a listen sent in one (where the gateway does not count its
	// URIs) is refused, and subscribes nothing.
	resp := fixture.Post(t, url+"/mcp", fixture.RawInitialize, map[string]string{"Authorization": "Bearer bob-secret-token-0123456789"})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("legacy initialize: %d, session %q", resp.StatusCode, sid)
	}
	before := lu.active.Load()
	a := listenWith(t, url, "bob", items(300, 3), map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-06-18"})
	if a.acked || !strings.Contains(a.err, "subscriptions/listen") {
		t.Fatalf("a listen in a legacy session: %+v, want it refused", a)
	}
	if n := lu.active.Load(); n != before {
		t.Fatalf("%d URIs subscribed upstream after a listen in a legacy session, want %d", n, before)
	}
}

// TestListenRateLimit: each URI of a subscriptions/listen counts against
// the principal's rate limit, as each message of a batch does.
func TestListenRateLimit(t *testing.T) {
	lu := &listenUpstream{}
	url := listenGateway(t, lu, 100, 1000, &config.RateLimit{Rate: config.Rate{RequestsPerSecond: 0.001, Burst: 10}})

	if a := listen(t, url, "alice", items(0, 11)); a.status != http.StatusTooManyRequests || !strings.Contains(a.err, "subscriptions/listen") {
		t.Fatalf("a listen of 11 URIs with a burst of 10: %+v, want 429 naming the listen's URIs", a)
	}
	if a := listen(t, url, "alice", items(0, 8)); !a.acked {
		t.Fatalf("a listen of 8 URIs with 10 left: %+v, want it acknowledged", a)
	}
	// 2 left: a listen of 3 is refused whole, one of 2 takes the rest.
	if a := listen(t, url, "alice", items(100, 3)); a.status != http.StatusTooManyRequests {
		t.Fatalf("a listen of 3 URIs with 2 left: %+v, want 429", a)
	}
	if a := listen(t, url, "alice", items(100, 2)); !a.acked {
		t.Fatalf("a listen of 2 URIs with 2 left: %+v, want it acknowledged", a)
	}
	if a := listen(t, url, "bob", items(0, 10)); !a.acked {
		t.Fatalf("bob's listen of 10: %+v, want it acknowledged (his own bucket)", a)
	}
}
