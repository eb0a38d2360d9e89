package gateway

import (
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// timedInit POSTs an initialize with the bearer token and returns the
// status and how long the answer took. It is safe in goroutines: a failed
// request is status 0.
func timedInit(url, token string) (int, time.Duration) {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(fixture.RawInitialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, time.Since(start)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(start)
}

// TestOAuthHangingIssuer: an issuer that takes requests and never answers
// holds no request longer than keyFetchTimeout; requests share one fetch
// rather than queue for fetches of their own; a token that is not a
// well-formed JWT fetches nothing; cached keys keep working while a
// refresh hangs.
func TestOAuthHangingIssuer(t *testing.T) {
	t.Parallel()
	bound := keyFetchTimeout + 2*time.Second

	t.Run("no keys yet", func(t *testing.T) {
		t.Parallel()
		hang, accepted := fixture.HangingListener(t)
		minter := fixture.NewIssuer(t, "", false)
		minter.AddKey("k1", false, true)
		cfg := gwConfig()
		cfg.Auth.OAuth = &config.OAuth{Issuer: hang, Audience: testAudience}
		_, url, _ := gwHub(t, cfg, &gwUpstream{})
		url += "/mcp"
		signed := minter.Token("k1", testAudience, jwt.MapClaims{"iss": hang})

		for range 3 {
			if status, took := timedInit(url, "a.b.c"); status != http.StatusUnauthorized || took > time.Second {
				t.Errorf("a.b.c: %d after %s, want 401 at once", status, took)
			}
		}
		if n := accepted.Load(); n != 0 {
			t.Errorf("tokens that are not JWTs made the hub contact the issuer %d times", n)
		}

		// Five at once wait for one shared fetch.
		var wg sync.WaitGroup
		for i := range 5 {
			wg.Go(func() {
				if status, took := timedInit(url, signed); status != http.StatusServiceUnavailable || took > bound {
					t.Errorf("concurrent request %d: %d after %s, want 503 within %s", i+1, status, took, bound)
				}
			})
		}
		wg.Wait()
		// Five more, one after another, do not add up.
		start := time.Now()
		for i := range 5 {
			if status, took := timedInit(url, signed); status != http.StatusServiceUnavailable || took > bound {
				t.Errorf("sequential request %d: %d after %s, want 503 within %s", i+1, status, took, bound)
			}
		}
		if took := time.Since(start); took > bound {
			t.Errorf("five sequential requests took %s together, want within %s", took, bound)
		}
		if n := accepted.Load(); n > 1 {
			t.Errorf("the issuer was contacted %d times, want one fetch shared by all", n)
		}
	})

	t.Run("keys cached", func(t *testing.T) {
		t.Parallel()
		iss := fixture.NewIssuer(t, "", false)
		iss.AddKey("k1", false, true)
		iss.AddKey("stranger", false, false)
		_, url, _ := gwHub(t, oauthConfig(iss), &gwUpstream{})
		url += "/mcp"
		good := iss.Token("k1", testAudience, nil)
		unknown := iss.Token("stranger", testAudience, nil)
		if status, _ := timedInit(url, good); status != http.StatusOK {
			t.Fatalf("good token: %d", status)
		}

		iss.Hang()
		type answer struct {
			status int
			took   time.Duration
		}
		refetch := make(chan answer, 1)
		go func() {
			status, took := timedInit(url, unknown)
			refetch <- answer{status, took}
		}()
		fixture.Eventually(t, bound, "the refetch for an unknown kid to reach the issuer", func() bool { return iss.Held.Load() > 0 })
		if status, took := timedInit(url, good); status != http.StatusOK {
			t.Errorf("good token while a refresh hangs: %d after %s, want 200", status, took)
		}
		select {
		case a := <-refetch:
			t.Errorf("the good token waited for the hanging refresh (which ended with %d after %s)", a.status, a.took)
		default:
		}
		if a := <-refetch; a.status != http.StatusUnauthorized || a.took > bound {
			t.Errorf("unknown kid while the issuer hangs: %d after %s, want 401 within %s", a.status, a.took, bound)
		}

		held := iss.Held.Load()
		for i := range 5 {
			if status, took := timedInit(url, unknown); status != http.StatusUnauthorized || took > time.Second {
				t.Errorf("unknown kid %d right after a refetch: %d after %s, want 401 at once", i+1, status, took)
			}
		}
		if got := iss.Held.Load(); got != held {
			t.Errorf("unknown kids made %d more fetches within unknownKIDEvery, want 0", got-held)
		}
	})
}

// rawSession initializes an HTTP session at protocol version pv with raw
// POSTs carrying hdr, and returns the headers its later requests need.
func rawSession(t *testing.T, url, pv string, hdr map[string]string) map[string]string {
	t.Helper()
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`, pv)
	resp := fixture.Post(t, url, init, hdr)
	io.Copy(io.Discard, resp.Body)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize at %s: %d, session %q", pv, resp.StatusCode, id)
	}
	out := maps.Clone(hdr)
	out["Mcp-Session-Id"] = id
	out["Mcp-Protocol-Version"] = pv
	if resp := fixture.Post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, out); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d", resp.StatusCode)
	}
	return out
}

// callBatch is a JSON-RPC batch of n tools/call of tool, ids from first.
func callBatch(tool string, first, n int) string {
	calls := make([]string, n)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{}}}`, first+i, tool)
	}
	return "[" + strings.Join(calls, ",") + "]"
}

// metricValue reads one sample of the hub's /metrics, 0 when absent.
func metricValue(t *testing.T, url, token, series string) float64 {
	t.Helper()
	status, body, _ := fixture.Get(t, url+"/metrics", map[string]string{"Authorization": "Bearer " + token})
	if status != http.StatusOK {
		t.Fatalf("/metrics: %d", status)
	}
	for line := range strings.Lines(body) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return f
		}
	}
	return 0
}

// TestRateLimitBatch: every request of a JSON-RPC batch (protocol
// 2025-03-26) counts against auth.rate_limit, in the metrics and in the
// audit log as if it had come alone; a batch the bucket cannot pay for
// whole is refused with 429 and none of it runs; a batch over
// MaxBatchMessages is refused with 400.
func TestRateLimitBatch(t *testing.T) {
	t.Parallel()
	cfg := gwConfig()
	cfg.Auth.Tokens = []config.Token{{Name: "a", Value: "token-a-1234"}, {Name: "ops", Value: "token-ops-1234"}}
	// A bucket of 6 that does not refill within the test: initialize
	// and notifications/initialized take 2, leaving 4.
	cfg.Auth.RateLimit = &config.RateLimit{Rate: config.Rate{RequestsPerSecond: 0.001, Burst: 6}, Principals: map[string]config.Rate{"token:ops": {}}}
	cfg.Audit.File = filepath.Join(t.TempDir(), "audit.jsonl")
	g := &gwUpstream{}
	_, base, _ := gwHub(t, cfg, g)
	hdr := rawSession(t, base+"/mcp", "2025-03-26", map[string]string{"Authorization": "Bearer token-a-1234"})
	upstreamCalls := func() int {
		g.mu.Lock()
		defer g.mu.Unlock()
		return len(g.metas)
	}

	steps := []struct {
		name       string
		body       string
		status     int
		retryAfter bool
		ran        int // calls that reached the upstream, in all
	}{
		{"5,000 calls in one batch", callBatch("gw__meta", 10, 5000), http.StatusBadRequest, false, 0},
		{"a batch larger than the burst", callBatch("gw__meta", 10, 7), http.StatusTooManyRequests, false, 0},
		{"a batch of 5 with 4 left", callBatch("gw__meta", 10, 5), http.StatusTooManyRequests, true, 0},
		{"a batch of 3 with 4 left", callBatch("gw__meta", 10, 3), http.StatusOK, false, 3},
		{"a batch of 2 with 1 left", callBatch("gw__meta", 20, 2), http.StatusTooManyRequests, true, 3},
		{"one call with 1 left", strings.Trim(callBatch("gw__meta", 30, 1), "[]"), http.StatusOK, false, 4},
		{"one call with none left", strings.Trim(callBatch("gw__meta", 40, 1), "[]"), http.StatusTooManyRequests, true, 4},
	}
	for _, s := range steps {
		resp := fixture.Post(t, base+"/mcp", s.body, hdr)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != s.status {
			t.Errorf("%s: %d (%s), want %d", s.name, resp.StatusCode, strings.TrimSpace(string(body)), s.status)
		}
		if got := resp.Header.Get("Retry-After") != ""; got != s.retryAfter {
			t.Errorf("%s: Retry-After %q, want one: %v", s.name, resp.Header.Get("Retry-After"), s.retryAfter)
		}
		if got := upstreamCalls(); got != s.ran {
			t.Errorf("after %s: %d calls reached the upstream, want %d", s.name, got, s.ran)
		}
		if s.status == http.StatusOK && s.ran == 3 {
			if n := strings.Count(string(body), `"result"`); n != 3 {
				t.Errorf("%s: %d results in the answer, want 3: %s", s.name, n, body)
			}
		}
	}

	// At 2025-06-18 and later there are no batches (go-sdk's check, by
	// the Mcp-Protocol-Version header).
	hdr18 := rawSession(t, base+"/mcp", "2025-06-18", map[string]string{"Authorization": "Bearer token-ops-1234"})
	if resp := fixture.Post(t, base+"/mcp", callBatch("gw__meta", 50, 2), hdr18); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a batch at 2025-06-18: %d, want 400", resp.StatusCode)
	}
	if got := upstreamCalls(); got != 4 {
		t.Errorf("a batch at 2025-06-18 reached the upstream: %d calls, want 4", got)
	}

	// Each request of a batch is one in the metrics and the audit log.
	if got := metricValue(t, base, "token-ops-1234", `mcp_hub_tool_calls_total{outcome="ok",server="gw",tool="meta"}`); got != 4 {
		t.Errorf("tool calls counted: %v, want 4", got)
	}
	if got := metricValue(t, base, "token-ops-1234", `mcp_hub_http_refused_total{reason="rate_limited"}`); got != 7+5+2+1 {
		t.Errorf("requests refused for the rate limit: %v, want %d (each request of a batch)", got, 7+5+2+1)
	}
	fixture.Eventually(t, 10*time.Second, "4 tools/call lines in the audit log", func() bool {
		b, _ := os.ReadFile(cfg.Audit.File)
		return strings.Count(string(b), `"method":"tools/call"`) == 4
	})
}

// fromAddress is a request as if from addr.
func fromAddress(method, path, addr string) *http.Request {
	r := httptest.NewRequest(method, path, nil)
	r.RemoteAddr = net.JoinHostPort(addr, "40000")
	return r
}

// churnAddress is the i-th of many distinct IPv4 addresses.
func churnAddress(i int) string {
	return fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
}

// TestRateLimitAddressChurn: a client past its limit stays limited while
// twice as many other addresses as the table holds each send a request;
// the table stays bounded; a bucket that has refilled gives its place to a
// new address; an IPv6 client is one client across its /64.
func TestRateLimitAddressChurn(t *testing.T) {
	t.Parallel()
	l := newRateLimiter(&config.RateLimit{Rate: config.Rate{RequestsPerSecond: 0.001, Burst: 2}})
	victim := fromAddress(http.MethodPost, "/mcp", "192.0.2.1")
	for i := range 2 {
		if _, ok := l.allow(anonymous, victim, 1); !ok {
			t.Fatalf("request %d within the burst refused", i+1)
		}
	}
	if _, ok := l.allow(anonymous, victim, 1); ok {
		t.Fatal("a request past the burst allowed")
	}
	for i := range 2*maxBuckets + 1 {
		l.allow(anonymous, fromAddress(http.MethodPost, "/mcp", churnAddress(i)), 1)
	}
	if _, ok := l.allow(anonymous, victim, 1); ok {
		t.Error("the limited client's bucket was reset by 20,001 other addresses")
	}
	if n := l.buckets.lru.Len(); n > maxBuckets {
		t.Errorf("%d buckets kept, want at most %d", n, maxBuckets)
	}

	v6 := newRateLimiter(&config.RateLimit{Rate: config.Rate{RequestsPerSecond: 0.001, Burst: 1}})
	if _, ok := v6.allow(anonymous, fromAddress(http.MethodPost, "/mcp", "2001:db8:1:2::1"), 1); !ok {
		t.Fatal("first IPv6 request refused")
	}
	if _, ok := v6.allow(anonymous, fromAddress(http.MethodPost, "/mcp", "2001:db8:1:2:ffff::7"), 1); ok {
		t.Error("another address of the same /64 has a bucket of its own")
	}

	// A refilled bucket is dropped for a new key, losing nothing.
	tab := newBucketTable(3)
	t0 := time.Now()
	limit := config.Rate{RequestsPerSecond: 1, Burst: 1}
	for _, k := range []string{"a", "b", "c"} {
		tab.get(k, limit, t0).AllowN(t0, 1)
	}
	t1 := t0.Add(10 * time.Second)
	tab.get("d", limit, t1)
	if tab.lru.Len() != 3 || tab.index["d"] == nil || tab.index["a"] != nil {
		t.Errorf("after a refilled bucket: kept %v, want b, c, d", slices.Sorted(maps.Keys(tab.index)))
	}
}

// TestRateLimitChurnEndToEnd: over HTTP, a client past auth.rate_limit is
// still refused after 10,001 other addresses have been served.
func TestRateLimitChurnEndToEnd(t *testing.T) {
	t.Parallel()
	cfg := gwConfig()
	cfg.Auth.RateLimit = &config.RateLimit{Rate: config.Rate{RequestsPerSecond: 0.001, Burst: 1}}
	h, url, _ := gwHub(t, cfg, &gwUpstream{})
	if status, _, _ := fixture.Get(t, url+"/mcp", nil); status == http.StatusTooManyRequests {
		t.Fatal("first request refused")
	}
	if status, _, _ := fixture.Get(t, url+"/mcp", nil); status != http.StatusTooManyRequests {
		t.Fatalf("second request: %d, want 429", status)
	}
	handler := h.HTTPHandler(nil)
	for i := range maxBuckets + 1 {
		handler.ServeHTTP(httptest.NewRecorder(), fromAddress(http.MethodGet, "/mcp", churnAddress(i)))
	}
	if status, _, _ := fixture.Get(t, url+"/mcp", nil); status != http.StatusTooManyRequests {
		t.Errorf("after 10,001 other addresses: %d, want 429 still", status)
	}
}

// TestAuthFailureLimit: past maxAuthFailures failed authentications an
// address gets 429 with Retry-After, even with a good token, while a good
// token from another address still works; /healthz and the dashboard's
// login go through the same count.
func TestAuthFailureLimit(t *testing.T) {
	t.Parallel()
	cfg := gwConfig()
	cfg.Auth.Tokens = []config.Token{{Name: "a", Value: "token-a-1234"}}
	h, url, _ := gwHub(t, cfg, &gwUpstream{})
	for i := range maxAuthFailures {
		if status := oauthInit(t, url+"/mcp", fmt.Sprintf("guess-%d", i)).StatusCode; status != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d, want 401", i+1, status)
		}
	}
	resp := oauthInit(t, url+"/mcp", "guess-next")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("bad token past the limit: %d (Retry-After %q), want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if status := oauthInit(t, url+"/mcp", "token-a-1234").StatusCode; status != http.StatusTooManyRequests {
		t.Errorf("good token from the blocked address: %d, want 429 (no token is checked from there)", status)
	}
	if _, err := h.VerifyToken(fromAddress(http.MethodPost, "/ui/login", "127.0.0.1"), "token-a-1234"); err == nil {
		t.Error("the dashboard's login checked a token from the blocked address")
	}

	// Another address: the good token works, and its own guesses count
	// for it alone.
	other := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}}).DialContext}}
	t.Cleanup(other.CloseIdleConnections)
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(fixture.RawInitialize))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer token-a-1234")
	resp, err := other.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("good token from another address: %d, want 200", resp.StatusCode)
	}

	// Guesses through /healthz count as well.
	healthz := func(token string) *httptest.ResponseRecorder {
		r := fromAddress(http.MethodGet, "/healthz", "127.0.0.3")
		r.Host = "127.0.0.1"
		r.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.HTTPHandler(nil).ServeHTTP(rec, r)
		return rec
	}
	for i := range maxAuthFailures {
		healthz(fmt.Sprintf("guess-%d", i))
	}
	if rec := healthz("token-a-1234"); strings.Contains(rec.Body.String(), `"servers"`) {
		t.Errorf("/healthz checked a token from an address past the limit: %s", rec.Body.String())
	}
	if rec := healthz("token-a-1234"); rec.Code != http.StatusOK {
		t.Errorf("/healthz: %d", rec.Code)
	}
}
