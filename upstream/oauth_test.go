package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

// Tests of upstream OAuth against a real authorization server and a real
// protected MCP server on 127.0.0.1 (internal/fixture/authserver.go).

// browserFollows is a browser whose user consents at once: it follows the
// authorization server's redirects to the hub's callback.
func browserFollows(ctx context.Context, authURL string) error {
	go func() {
		req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, authURL, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	return nil
}

// browserTampering follows the first redirect by hand, after edit changed
// its query: a forged or mixed-up redirect.
func browserTampering(edit func(url.Values)) func(context.Context, string) error {
	return func(ctx context.Context, authURL string) error {
		go func() {
			noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noFollow.Get(authURL)
			if err != nil {
				return
			}
			resp.Body.Close()
			back, err := url.Parse(resp.Header.Get("Location"))
			if err != nil {
				return
			}
			q := back.Query()
			edit(q)
			back.RawQuery = q.Encode()
			if resp, err := http.Get(back.String()); err == nil {
				resp.Body.Close()
			}
		}()
		return nil
	}
}

// oauthEnv is one test's authorization server, token store and logs.
type oauthEnv struct {
	as    *fixture.AuthServer
	store *tokenstore.Store
	logs  *fixture.Log
}

func newOAuthEnv(t *testing.T, ttl time.Duration) *oauthEnv {
	store, err := tokenstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return &oauthEnv{as: fixture.NewAuthServer(t, ttl, "mcp:read"), store: store, logs: fixture.NewLog(t)}
}

func (e *oauthEnv) options(browser func(context.Context, string) error) Options {
	return Options{
		InitialBackoff: 20 * time.Millisecond,
		MaxBackoff:     200 * time.Millisecond,
		Logger:         slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OAuth: OAuthOptions{
			Store:        e.store,
			Browser:      browser,
			Prompt:       e.logs,
			Timeout:      20 * time.Second,
			PollInterval: 50 * time.Millisecond,
		},
	}
}

func (e *oauthEnv) login(t *testing.T, name, url string) *LoginResult {
	t.Helper()
	res, err := Login(ctxT(t), config.Upstream{Name: name, URL: url}, e.options(browserFollows))
	if err != nil {
		t.Fatalf("login %s: %v", name, err)
	}
	return res
}

// start runs a non-interactive upstream (as serve does).
func (e *oauthEnv) start(t *testing.T, name, url string) *Upstream {
	t.Helper()
	u := New(config.Upstream{Name: name, URL: url}, newTestListener(), e.options(func(context.Context, string) error {
		t.Error("a non-interactive upstream opened a browser")
		return nil
	}))
	u.Start(context.Background())
	t.Cleanup(func() { u.Close() })
	return u
}

// noSecrets fails if any secret the authorization server issued shows in
// the texts.
func (e *oauthEnv) noSecrets(t *testing.T, texts map[string]string) {
	t.Helper()
	for _, s := range e.as.Secrets() {
		for where, text := range texts {
			if strings.Contains(text, s) {
				t.Errorf("%s contains a secret the authorization server issued (%.12s...)", where, s)
			}
		}
	}
}

func whoami(t *testing.T, u *Upstream) (string, error) {
	t.Helper()
	res, err := u.CallTool(ctxT(t), nil, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		return "", err
	}
	return fixture.ResultText(fixture.Result(t, res)), nil
}

func TestOAuthLogin(t *testing.T) {
	e := newOAuthEnv(t, time.Hour)
	ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
	res := e.login(t, "svc", ps.URL)
	if !res.Authorized || res.Tools != 1 || !res.Refreshable || res.Registration != tokenstore.Dynamic {
		t.Errorf("login result %+v: want authorized, 1 tool, a refresh token, a dynamic registration", res)
	}
	if strings.Join(res.Scopes, " ") != "mcp:read" || time.Until(res.Expiry) < 50*time.Minute {
		t.Errorf("login result scopes %v, expiry %v", res.Scopes, res.Expiry)
	}
	rec, err := e.store.Load(ctxT(t), "svc", ps.URL)
	if err != nil || rec == nil || rec.Client == nil || rec.Token == nil {
		t.Fatalf("stored record %+v, %v", rec, err)
	}
	if rec.Client.Secret == "" || rec.Client.TokenURL != e.as.URL+"/token" || !strings.HasPrefix(rec.Client.RedirectURL, "http://127.0.0.1:") {
		t.Errorf("stored client %+v", rec.Client)
	}

	u := e.start(t, "svc", ps.URL)
	waitReady(t, u)
	if text, err := whoami(t, u); err != nil || text != "scopes: mcp:read" {
		t.Errorf("whoami = %q, %v", text, err)
	}
	// Logging in again reuses the registration: Dynamic Client
	// Registration happens once.
	e.login(t, "svc", ps.URL)
	if c := e.as.Counters(); c.Registrations != 1 || c.CodeGrants != 2 {
		t.Errorf("after two logins: %+v; want 1 registration and 2 code grants", c)
	}
	e.noSecrets(t, map[string]string{"log": e.logs.String(), "status": fmt.Sprint(u.Status())})
}

// An access token goes only to the origin of the server it was issued
// for: when the server redirects elsewhere, the request is refused before
// it is sent, and the other origin sees nothing (the authorization
// server's own origin is reached by the login only, through its own
// client).
func TestOAuthTokenStaysWithItsOrigin(t *testing.T) {
	e := newOAuthEnv(t, time.Hour)
	ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
	e.login(t, "svc", ps.URL)
	var mu sync.Mutex
	var seen []string // Authorization headers the other origin got
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.Error(w, "not here", http.StatusNotFound)
	}))
	t.Cleanup(elsewhere.Close)
	ps.RedirectTo(elsewhere.URL + "/mcp")

	opts := e.options(nil)
	opts.Cooldown = 100 * time.Millisecond // a quick probe once the redirect is gone
	u := New(config.Upstream{Name: "svc", URL: ps.URL}, newTestListener(), opts)
	u.Start(context.Background())
	t.Cleanup(func() { u.Close() })
	fixture.Eventually(t, 30*time.Second, "the redirect to be refused", func() bool {
		return strings.Contains(u.Status().LastError, "refused a redirect to "+elsewhere.URL)
	})
	mu.Lock()
	if len(seen) != 0 {
		t.Errorf("the other origin got %d requests (Authorization %q); want none", len(seen), seen)
	}
	mu.Unlock()

	// The same server, back at its origin, is served with the token.
	ps.RedirectTo("")
	waitReady(t, u)
	if text, err := whoami(t, u); err != nil || text != "scopes: mcp:read" {
		t.Errorf("whoami = %q, %v", text, err)
	}
	e.noSecrets(t, map[string]string{"log": e.logs.String(), "status": fmt.Sprint(u.Status())})
}

// Tokens are refreshed before they expire: the server never sees an
// expired one.
func TestOAuthRefreshBeforeExpiry(t *testing.T) {
	e := newOAuthEnv(t, 2*time.Second)
	ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
	e.login(t, "svc", ps.URL)
	u := e.start(t, "svc", ps.URL)
	waitReady(t, u)
	fixture.Eventually(t, 30*time.Second, "two refreshes while calling", func() bool {
		if _, err := whoami(t, u); err != nil {
			t.Fatalf("call: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // pace the calls
		return e.as.Counters().Refreshes >= 2
	})
	if c := e.as.Counters(); c.LateRefreshes != 0 {
		t.Errorf("%d of %d refreshes came after the token had expired", c.LateRefreshes, c.Refreshes)
	}
	if refused, _ := ps.Refused(); refused != 0 {
		t.Errorf("the server refused %d requests with a token: a token was used after it expired", refused)
	}
	rec, _ := e.store.Load(ctxT(t), "svc", ps.URL)
	if rec == nil || time.Until(rec.Token.Expiry) <= 0 {
		t.Errorf("the store does not hold the refreshed token: %+v", rec)
	}
	e.noSecrets(t, map[string]string{"log": e.logs.String()})
}

// A token the server refuses (401) is refreshed once and the request
// repeated.
func TestOAuthRefreshAfter401(t *testing.T) {
	e := newOAuthEnv(t, time.Hour)
	ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
	e.login(t, "svc", ps.URL)
	u := e.start(t, "svc", ps.URL)
	waitReady(t, u)
	e.as.ForgetAccessTokens()
	if _, err := whoami(t, u); err != nil {
		t.Fatalf("call after the access token was revoked: %v", err)
	}
	if c := e.as.Counters(); c.Refreshes != 1 {
		t.Errorf("refreshes = %d, want 1", c.Refreshes)
	}
	if refused, _ := ps.Refused(); refused != 1 {
		t.Errorf("401s with a token = %d, want 1", refused)
	}
	if u.Status().State != StateReady {
		t.Errorf("state %s", u.Status().State)
	}
}

// A refresh token the authorization server refuses leaves the server
// needs_login, with an error naming the fix; a new login is picked up
// without a restart.
func TestOAuthRevokedRefreshNeedsLogin(t *testing.T) {
	e := newOAuthEnv(t, time.Hour)
	ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
	e.login(t, "svc", ps.URL)
	u := e.start(t, "svc", ps.URL)
	waitReady(t, u)
	e.as.RevokeAll()

	_, err := whoami(t, u)
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.State != StateNeedsLogin {
		t.Fatalf("call after the grant was revoked: %v; want needs_login", err)
	}
	for _, want := range []string{"server 'svc' needs authorization", "invalid_grant", "mcp-hub login svc", "retry"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	st := u.Status()
	if st.State != StateNeedsLogin || !strings.Contains(st.LastError, "mcp-hub login svc") {
		t.Errorf("status %+v", st)
	}
	// The refused refresh token is not tried again.
	whoami(t, u)
	if c := e.as.Counters(); c.RefusedRefreshes != 1 {
		t.Errorf("refused refreshes = %d, want 1 (a refused refresh token must not be retried)", c.RefusedRefreshes)
	}

	e.login(t, "svc", ps.URL)
	fixture.Eventually(t, 10*time.Second, "the new login to be picked up", func() bool { return u.Status().State == StateReady })
	if _, err := whoami(t, u); err != nil {
		t.Errorf("call after logging in again: %v", err)
	}
	e.noSecrets(t, map[string]string{"log": e.logs.String(), "error": err.Error(), "status": fmt.Sprint(st)})
}

// A server nobody logged in to is needs_login from the start, makes no
// registration, opens no browser, and joins once a login is stored.
func TestOAuthNeedsLoginAtStart(t *testing.T) {
	e := newOAuthEnv(t, time.Hour)
	ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
	u := e.start(t, "svc", ps.URL)
	fixture.Eventually(t, 20*time.Second, "needs_login", func() bool { return u.Status().State == StateNeedsLogin })
	_, err := whoami(t, u)
	if err == nil || !strings.Contains(err.Error(), "mcp-hub login svc") {
		t.Errorf("call: %v; want an error naming mcp-hub login svc", err)
	}
	if c := e.as.Counters(); c.Registrations != 0 || c.Authorizations != 0 {
		t.Errorf("a non-interactive upstream went to the authorization server: %+v", c)
	}
	e.login(t, "svc", ps.URL)
	waitReady(t, u)
	if len(u.Lists().Tools) != 1 {
		t.Errorf("tools after login: %d", len(u.Lists().Tools))
	}
}

// Two servers on one authorization server get a registration each, and
// their tokens are kept apart.
func TestOAuthTwoServersOneAuthServer(t *testing.T) {
	e := newOAuthEnv(t, time.Hour)
	a := fixture.NewProtectedServer(t, e.as, "mcp:read")
	b := fixture.NewProtectedServer(t, e.as, "mcp:read")
	e.login(t, "a", a.URL)
	e.login(t, "b", b.URL)
	if c := e.as.Counters(); c.Registrations != 2 {
		t.Errorf("registrations = %d, want 2", c.Registrations)
	}
	ra, _ := e.store.Load(ctxT(t), "a", a.URL)
	rb, _ := e.store.Load(ctxT(t), "b", b.URL)
	if ra == nil || rb == nil || ra.Client.ID == rb.Client.ID || ra.Token.AccessToken == rb.Token.AccessToken {
		t.Errorf("records share a client or a token: %+v %+v", ra, rb)
	}
	// Server a at b's URL is another record: nothing to reuse.
	if r, _ := e.store.Load(ctxT(t), "a", b.URL); r != nil {
		t.Errorf("a record for a at b's URL exists")
	}
}

func TestOAuthLoginFailures(t *testing.T) {
	tests := []struct {
		name    string
		browser func(context.Context, string) error
		deny    bool
		timeout time.Duration
		want    string
	}{
		{name: "denied", browser: browserFollows, deny: true, want: "access_denied"},
		{name: "issuer mismatch", browser: browserTampering(func(q url.Values) { q.Set("iss", "http://127.0.0.1:1") }), want: "does not match expected issuer"},
		{name: "timeout", browser: func(context.Context, string) error { return nil }, timeout: 300 * time.Millisecond, want: "no authorization arrived within 300ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newOAuthEnv(t, time.Hour)
			ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
			e.as.SetDeny(tc.deny)
			opts := e.options(tc.browser)
			if tc.timeout > 0 {
				opts.OAuth.Timeout = tc.timeout
			}
			res, err := Login(ctxT(t), config.Upstream{Name: "svc", URL: ps.URL}, opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("login: %v; want an error containing %q", err, tc.want)
			}
			if res != nil && res.Authorized {
				t.Errorf("result says authorized: %+v", res)
			}
			if r, _ := e.store.Load(ctxT(t), "svc", ps.URL); r != nil && r.Token != nil {
				t.Errorf("a token was stored after a failed login")
			}
		})
	}
}

func TestBrowserCommand(t *testing.T) {
	found := func(string) (string, error) { return "/usr/bin/x", nil }
	missing := func(string) (string, error) { return "", errors.New("not found") }
	tests := []struct {
		goos, env string
		look      func(string) (string, error)
		want      string
	}{
		{"linux", "", found, "xdg-open"},
		{"linux", "", missing, ""},
		{"linux", "/opt/browser", found, "/opt/browser"},
		{"darwin", "", missing, "open"},
		{"windows", "", missing, "rundll32 url.dll,FileProtocolHandler"},
		{"windows", `C:\Program Files\Firefox\firefox.exe`, missing, `C:\Program Files\Firefox\firefox.exe`},
		{"freebsd", "", found, "xdg-open"},
	}
	for _, tc := range tests {
		name, args := browserCommand(tc.goos, tc.env, tc.look)
		if got := strings.Join(append([]string{name}, args...), " "); strings.TrimSpace(got) != tc.want {
			t.Errorf("browserCommand(%s, %q) = %q, want %q", tc.goos, tc.env, got, tc.want)
		}
	}
}

func TestOAuthConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  config.Upstream
		want string
	}{
		{config.Upstream{URL: "https://x.example/mcp", OAuth: &config.UpstreamOAuth{ClientID: "id", Scopes: []string{"a"}, RedirectPort: 8976}}, ""},
		{config.Upstream{Command: "x", OAuth: &config.UpstreamOAuth{}}, "only applies to url servers"},
		{config.Upstream{URL: "https://x.example/sse", Transport: "sse", OAuth: &config.UpstreamOAuth{}}, "streamable-http"},
		{config.Upstream{URL: "https://x.example/mcp", OAuth: &config.UpstreamOAuth{ClientSecret: "s"}}, "needs oauth.client_id"},
		{config.Upstream{URL: "https://x.example/mcp", OAuth: &config.UpstreamOAuth{RedirectPort: 70000}}, "not a port"},
		{config.Upstream{URL: "https://x.example/mcp", OAuth: &config.UpstreamOAuth{ClientMetadataURL: "http://x.example/c.json"}}, "https URL with a path"},
		{config.Upstream{URL: "https://x.example/mcp", OAuth: &config.UpstreamOAuth{ClientMetadataURL: "https://x.example/"}}, "https URL with a path"},
		{config.Upstream{URL: "https://x.example/mcp", Headers: map[string]string{"authorization": "Bearer x"}, OAuth: &config.UpstreamOAuth{}}, "exclude each other"},
	}
	for _, tc := range tests {
		err := tc.cfg.Validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.cfg.OAuth, err, tc.want)
		}
	}
}

func TestUsable(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name string
		tok  tokenstore.Token
		want bool
	}{
		{"no expiry", tokenstore.Token{AccessToken: "a"}, true},
		{"empty", tokenstore.Token{}, false},
		{"an hour left", tokenstore.Token{AccessToken: "a", Obtained: now, Expiry: now.Add(time.Hour)}, true},
		{"under a minute left of an hour", tokenstore.Token{AccessToken: "a", Obtained: now.Add(-time.Hour), Expiry: now.Add(50 * time.Second)}, false},
		{"short-lived, early", tokenstore.Token{AccessToken: "a", Obtained: now, Expiry: now.Add(4 * time.Second)}, true},
		{"short-lived, last quarter", tokenstore.Token{AccessToken: "a", Obtained: now.Add(-3500 * time.Millisecond), Expiry: now.Add(500 * time.Millisecond)}, false},
		{"expired", tokenstore.Token{AccessToken: "a", Expiry: now.Add(-time.Second)}, false},
	}
	for _, tc := range tests {
		if got := usable(&tc.tok, now); got != tc.want {
			t.Errorf("%s: usable = %v, want %v", tc.name, got, tc.want)
		}
	}
}
