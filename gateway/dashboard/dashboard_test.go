package dashboard

import (
	"context"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/gateway"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

const testConfig = `
servers:
  time: {builtin: time, defer_loading: false}
  calc: {builtin: calc, defer_loading: true}
discovery: {enabled: true}
auth:
  tokens:
    - {name: ops, token: dashboard-token-1234}
`

// serveDashboard runs a hub on the builtin servers with the dashboard
// mounted as `mcp-hub serve --http` mounts it.
func serveDashboard(t *testing.T, yaml string) (*hub.Hub, string) {
	t.Helper()
	cfg, err := config.Parse("hub.yaml", []byte(yaml), builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, cfg, gateway.Options{Hub: hub.Options{Logger: slog.New(slog.DiscardHandler),
		Builtin: builtin.Maker(builtin.Options{Logger: slog.New(slog.DiscardHandler)})}})
	if err != nil {
		t.Fatal(err)
	}
	ui := New(g)
	srv := httptest.NewServer(g.HTTPHandler(map[string]http.Handler{gateway.UIPath: ui, gateway.UIPath + "/": ui}))
	t.Cleanup(func() {
		srv.Close()
		g.Close()
	})
	return g.Hub(), srv.URL
}

// noRedirects is a client that shows redirects instead of following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func do(t *testing.T, method, u string, form url.Values, headers map[string]string) (*http.Response, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, u, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestLogin: the login form sets an HttpOnly, SameSite=Strict cookie for a
// good token, only from the hub's own page; the cookie opens /ui and
// nothing else.
func TestLogin(t *testing.T) {
	_, base := serveDashboard(t, testConfig)

	resp, _ := do(t, "GET", base+"/ui", nil, nil)
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/login" {
		t.Fatalf("GET /ui without a token: %d to %q, want 303 to /ui/login", resp.StatusCode, resp.Header.Get("Location"))
	}
	if resp, body := do(t, "GET", base+"/ui/login", nil, nil); resp.StatusCode != 200 || !strings.Contains(body, `name="token"`) {
		t.Fatalf("GET /ui/login: %d\n%s", resp.StatusCode, body)
	}
	own := map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}
	if resp, body := do(t, "POST", base+"/ui/login", url.Values{"token": {"wrong"}}, own); resp.StatusCode != 401 || !strings.Contains(body, "not accepted") || len(resp.Cookies()) != 0 {
		t.Errorf("bad token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	for name, headers := range map[string]map[string]string{
		"another local origin": {"Origin": "http://localhost:1", "Sec-Fetch-Site": "same-site"},
		"cross-site fetch":     {"Sec-Fetch-Site": "cross-site"},
	} {
		if resp, _ := do(t, "POST", base+"/ui/login", url.Values{"token": {"dashboard-token-1234"}}, headers); resp.StatusCode != 403 || len(resp.Cookies()) != 0 {
			t.Errorf("login from %s: %d, cookies %v; want 403 and no cookie", name, resp.StatusCode, resp.Cookies())
		}
	}
	resp, _ = do(t, "POST", base+"/ui/login", url.Values{"token": {"dashboard-token-1234"}}, own)
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("good token: %d, cookies %v", resp.StatusCode, resp.Cookies())
	}
	c := resp.Cookies()[0]
	if c.Name != gateway.UICookie || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/ui" || c.Secure {
		t.Errorf("cookie %+v: want %s, HttpOnly, SameSite=Strict, Path=/ui, not Secure over plain http", c, gateway.UICookie)
	}
	cookie := map[string]string{"Cookie": c.Name + "=" + c.Value}
	if resp, body := do(t, "GET", base+"/ui", nil, cookie); resp.StatusCode != 200 || !strings.Contains(body, `id="principal">ops<`) {
		t.Errorf("GET /ui with the cookie: %d\n%.300s", resp.StatusCode, body)
	}
	for _, path := range []string{"/mcp", "/metrics"} {
		if resp, _ := do(t, "GET", base+path, nil, cookie); resp.StatusCode != 401 {
			t.Errorf("the dashboard cookie opened %s: %d", path, resp.StatusCode)
		}
	}
	if resp, _ := do(t, "GET", base+"/ui", nil, map[string]string{"Authorization": "Bearer dashboard-token-1234"}); resp.StatusCode != 200 {
		t.Errorf("GET /ui with a bearer header: %d", resp.StatusCode)
	}
	// Over TLS (here: behind a proxy that says so) the cookie is Secure.
	if resp, _ := do(t, "POST", base+"/ui/login", url.Values{"token": {"dashboard-token-1234"}}, map[string]string{"X-Forwarded-Proto": "https"}); len(resp.Cookies()) != 1 || !resp.Cookies()[0].Secure {
		t.Errorf("login over TLS: cookie %v, want Secure", resp.Cookies())
	}
	resp, _ = do(t, "POST", base+"/ui/logout", url.Values{}, mergeHeaders(own, cookie))
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 || resp.Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout: %d, cookies %v; want the cookie cleared", resp.StatusCode, resp.Cookies())
	}
	if resp, _ := do(t, "POST", base+"/ui/logout", url.Values{}, mergeHeaders(map[string]string{"Sec-Fetch-Site": "cross-site"}, cookie)); resp.StatusCode != 403 {
		t.Errorf("logout from another site: %d, want 403", resp.StatusCode)
	}
}

// bearer adds a bearer token to every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

func mergeHeaders(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

var searchResult = regexp.MustCompile(`(?s)<pre id="search-result"[^>]*>(.*?)</pre>`)

// TestPageContent: servers, tools (eager and deferred), sessions and a
// search whose result is Hub.Search's text, HTML-escaped.
func TestPageContent(t *testing.T) {
	h, base := serveDashboard(t, testConfig)
	auth := map[string]string{"Authorization": "Bearer dashboard-token-1234"}
	// A client session of principal ops that has loaded a tool.
	client := mcp.NewClient(&mcp.Implementation{Name: "dash-test", Version: "1.2"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearer("dashboard-token-1234")}, DisableStandaloneSSE: true}, fixture.Legacy())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: hub.SearchToolsName, Arguments: map[string]any{"tool_names": []string{"calc__evaluate"}}}); err != nil {
		t.Fatal(err)
	}
	resp, body := do(t, "GET", base+"/ui?q=convert+units", nil, auth)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /ui: %d\n%s", resp.StatusCode, body)
	}
	for _, want := range []string{`data-server="time"`, `data-server="calc"`, "calc__convert_units", `<span class="badge deferred">deferred</span>`, `<span class="badge eager">eager</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, tl := range h.Catalog().Tools {
		if !strings.Contains(body, "<code>"+tl.Name+"</code>") {
			t.Errorf("page does not list the tool %s", tl.Name)
		}
	}
	// The hub registers a session when its initialized notification has
	// been handled, which may come after the first answers.
	session := regexp.MustCompile(`(?s)<tr class="session">.*?token:ops <span class="muted">\(token\)</span>.*?dash-test 1\.2.*?<code>calc__evaluate</code>`)
	fixture.Eventually(t, 30*time.Second, "the page shows the client's session with its principal, client and loaded tool", func() bool {
		if !session.MatchString(body) {
			_, body = do(t, "GET", base+"/ui?q=convert+units", nil, auth)
			return false
		}
		return true
	})
	m := searchResult.FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no search result on the page")
	}
	res, err := h.Search(context.Background(), "", []string{"convert units"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := html.UnescapeString(m[1]), hub.ResultText(res); got != want {
		t.Errorf("search box shows\n%s\nwant what search_tools returns\n%s", got, want)
	}
	if !strings.Contains(body, "Content-Security-Policy") && resp.Header.Get("Content-Security-Policy") == "" {
		t.Error("no Content-Security-Policy")
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "src=\"http") || strings.Contains(body, "href=\"http") {
		t.Error("the page loads scripts or external assets")
	}
}

// TestLoginFailureLimit: the login form is under the failed-authentication
// limit like /mcp and /metrics, with the same answer: past maxAuthFailures
// (20) bad tokens from an address, 429 with Retry-After, on the form and
// on every other path, a good token included.
func TestLoginFailureLimit(t *testing.T) {
	_, base := serveDashboard(t, testConfig)
	own := map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}
	for i := range 20 {
		if resp, _ := do(t, "POST", base+"/ui/login", url.Values{"token": {"guess-" + strconv.Itoa(i)}}, own); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("bad token %d: %d, want 401", i+1, resp.StatusCode)
		}
	}
	for _, token := range []string{"guess-next", "dashboard-token-1234"} {
		resp, body := do(t, "POST", base+"/ui/login", url.Values{"token": {token}}, own)
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" || len(resp.Cookies()) != 0 {
			t.Errorf("login with %s past the limit: %d (Retry-After %q, cookies %v), want 429 with Retry-After\n%.300s", token, resp.StatusCode, resp.Header.Get("Retry-After"), resp.Cookies(), body)
		}
	}
	for _, path := range []string{"/ui/login", "/ui", "/mcp", "/metrics"} {
		resp, _ := do(t, "GET", base+path, nil, map[string]string{"Authorization": "Bearer dashboard-token-1234"})
		if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Errorf("GET %s past the limit: %d (Retry-After %q), want 429 with Retry-After", path, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}
