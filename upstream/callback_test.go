package upstream

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// A hostile authorization server names a non-web authorization endpoint:
// the login fails with an error that does not repeat the URL, and the
// opener is never called.
func TestOAuthLoginOpensOnlyWebURLs(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, endpoint string }{
		{"file", "file:///etc/passwd"},
		{"smb on loopback", "smb://127.0.0.1/share/x.exe"},
		{"ms-msdt", "ms-msdt:-id PCWDiagnostic /skip force"},
		{"user-info", "http://accounts.example@127.0.0.1:1/authorize"},
		{"no host", "http:///authorize"},
		{"javascript", "javascript:alert(1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newOAuthEnv(t, time.Hour)
			ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
			e.as.SetAuthorizationEndpoint(tc.endpoint)
			var mu sync.Mutex
			var opened []string
			res, err := Login(ctxT(t), config.Upstream{Name: "svc", URL: ps.URL}, e.options(func(_ context.Context, u string) error {
				mu.Lock()
				defer mu.Unlock()
				opened = append(opened, u)
				return nil
			}))
			if err == nil || res != nil && res.Authorized {
				t.Fatalf("login succeeded (%+v) with authorization endpoint %q", res, tc.endpoint)
			}
			// The hub's own check ("refusing to open") or go-sdk's metadata
			// validation (which names the field) stops it.
			if msg := err.Error(); !strings.Contains(msg, "refusing to open") && !strings.Contains(msg, "authorization_endpoint") {
				t.Errorf("login error %q: want it to say why the URL is refused", msg)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(opened) > 0 {
				t.Errorf("the opener was called with %q", opened)
			}
			if strings.Contains(e.logs.String(), tc.endpoint) {
				t.Errorf("the refused URL was printed:\n%s", e.logs.String())
			}
		})
	}
}

func TestBrowsableURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, err string }{
		{in: "https://as.example/authorize?state=x&scope=a+b", want: "https://as.example/authorize?state=x&scope=a+b"},
		{in: "HTTP://127.0.0.1:8080/a", want: "http://127.0.0.1:8080/a"},
		{in: "https://as.example/a?x=\u202e\u00e9 y", want: "https://as.example/a?x=%E2%80%AE%C3%A9%20y"},
		{in: `https://as.example/a?q="x"|<y>^{z}\`, want: "https://as.example/a?q=%22x%22%7C%3Cy%3E%5E%7Bz%7D%5C"},
		{in: "file:///etc/passwd", err: `scheme "file"`},
		{in: `\\host\share`, err: "scheme"},
		{in: "ms-msdt:/id", err: `scheme "ms-msdt"`},
		{in: "https://good.example@evil.example/", err: "user-info"},
		{in: "https:evil", err: "no host"},
		{in: "https://as.example/\x1b[2J", err: "not a valid URL"},
	}
	for _, tc := range tests {
		got, err := browsableURL(tc.in)
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("browsableURL(%q) = %q, %v; want an error containing %q", tc.in, got, err, tc.err)
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("browsableURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		case err != nil && strings.Contains(err.Error(), tc.in):
			t.Errorf("browsableURL(%q): the error repeats the URL: %v", tc.in, err)
		}
	}
}

// Anyone who can reach the callback's port can send it a redirect:
// without the authorization's state it gets a 400 and the login goes on
// (here: to success with the genuine redirect that follows).
func TestOAuthCallbackIgnoresForeignRedirects(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, time.Hour)
	ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
	foreign := []url.Values{
		{"error": {"access_denied"}},
		{"error": {"access_denied"}, "state": {"forged"}},
		{"error": {"access_denied"}, "state": {""}},
		{"code": {"stolen"}, "state": {"forged"}},
		{"code": {"stolen"}},
	}
	statuses := make(chan string, len(foreign))
	browser := func(ctx context.Context, authURL string) error {
		u, err := url.Parse(authURL)
		if err != nil {
			return err
		}
		callback := u.Query().Get("redirect_uri")
		for _, q := range foreign {
			resp, err := http.Get(callback + "?" + q.Encode())
			if err != nil {
				statuses <- fmt.Sprintf("%s: %v", q.Encode(), err)
				continue
			}
			resp.Body.Close()
			statuses <- fmt.Sprintf("%s: %d", q.Encode(), resp.StatusCode)
		}
		return browserFollows(ctx, authURL)
	}
	res, err := Login(ctxT(t), config.Upstream{Name: "svc", URL: ps.URL}, e.options(browser))
	if err != nil || !res.Authorized {
		t.Fatalf("login after foreign redirects: %+v, %v; want it to wait for the genuine one and succeed", res, err)
	}
	for range foreign {
		if s := <-statuses; !strings.HasSuffix(s, ": 400") {
			t.Errorf("foreign redirect %s; want 400", s)
		}
	}
}

// The authorization server's refusal reaches the terminal bounded and
// without control characters.
func TestOAuthDeniedDescriptionCleaned(t *testing.T) {
	t.Parallel()
	e := newOAuthEnv(t, time.Hour)
	ps := fixture.NewProtectedServer(t, e.as, "mcp:read")
	e.as.SetDenyDescription("\x1b[2J\x1b]0;owned\x07line\nbreak " + strings.Repeat("A", 10<<10))
	_, err := Login(ctxT(t), config.Upstream{Name: "svc", URL: ps.URL}, e.options(browserFollows))
	if err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("login: %v; want access_denied", err)
	}
	msg := err.Error()
	if strings.ContainsAny(msg, "\x1b\x07\n") {
		t.Errorf("the error keeps control characters: %q", msg[:min(len(msg), 80)])
	}
	if len(msg) > 1000 || !strings.Contains(msg, "[2J") || !strings.Contains(msg, "line\uFFFDbreak") || !strings.Contains(msg, "[cut:") {
		t.Errorf("error (%d bytes) %.120q...: want the description cleaned, cut and marked", len(msg), msg)
	}
}
