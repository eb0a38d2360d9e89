//go:build linux

package e2e

// The team-deployment features through `mcp-hub serve --http` (this test
// binary re-executed as mcp-hub): the dashboard in a real headless
// Chromium, and the OAuth resource server with nothing configured but the
// issuer and the audience.

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// chromium loads url in headless Chromium and returns the DOM; it also
// saves a screenshot to png. (The page has no script, and its
// Content-Security-Policy would block one; Chromium's own switch to turn
// scripts off also turns off --dump-dom.)
func chromium(t *testing.T, url, png string) string {
	t.Helper()
	bin := realBinary(t, "chromium", "chromium")
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir="+t.TempDir(),
		"--window-size=1280,1600", "--screenshot="+png, "--dump-dom", url)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, stderr.String())
	}
	return string(out)
}

const dashboardConfig = `
servers:
  time: {builtin: time, defer_loading: false}
  calc: {builtin: calc, defer_loading: true}
  text: {builtin: text, defer_loading: true}
discovery: {enabled: true}
`

var (
	domSearchResult = regexp.MustCompile(`(?s)<pre id="search-result"[^>]*>(.*?)</pre>`)
	domServerRow    = regexp.MustCompile(`(?s)<tr class="server" data-server="([^"]+)">.*?<span class="badge [a-z]+">([a-z]+)</span>`)
	domToolRow      = regexp.MustCompile(`<tr class="tool"><td[^>]*><code>([^<]+)</code></td><td[^>]*><span class="badge (eager|deferred)">`)
)

// TestDashboardInChromium: /ui rendered by headless Chromium shows every
// server of the config with its state and every tool with its status, and
// its search box shows exactly what `mcp-hub search` prints (acceptance 5),
// for a task of two steps too ("a; b" in the box, --step on the command
// line).
func TestDashboardInChromium(t *testing.T) {
	realBinary(t, "chromium", "chromium")
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, dashboardConfig)
	addr := freeAddr(t)
	startChild(t, "hub", []string{envAsMain + "=1"}, self, "--config", cfg, "serve", "--http", addr)
	waitHealthy(t, "http://"+addr+"/healthz")

	toolsJSON, code := runMain(t, nil, "--config", cfg, "--log-level", "error", "tools", "--json")
	var tools []struct{ Name, Server, Status string }
	if err := json.Unmarshal([]byte(toolsJSON), &tools); code != 0 || err != nil || len(tools) == 0 {
		t.Fatalf("mcp-hub tools --json: exit %d, %v\n%s", code, err, toolsJSON)
	}
	const query, step = "convert units", "slugify text"
	searchOut, code := runMain(t, nil, "--config", cfg, "--log-level", "error", "search", query, "--step", step)
	if code != 0 || !strings.Contains(searchOut, "calc__convert_units") || !strings.Contains(searchOut, "text__slugify") {
		t.Fatalf("mcp-hub search %q --step %q: exit %d\n%s", query, step, code, searchOut)
	}

	png := filepath.Join(t.TempDir(), "dashboard.png")
	if dir := os.Getenv("MCP_HUB_SCREENSHOT_DIR"); dir != "" {
		png = filepath.Join(dir, "dashboard.png")
	}
	dom := chromium(t, fmt.Sprintf("http://%s/ui?q=%s", addr, url.QueryEscape(query+"; "+step)), png)

	servers := map[string]string{}
	for _, m := range domServerRow.FindAllStringSubmatch(dom, -1) {
		servers[m[1]] = m[2]
	}
	for _, name := range []string{"time", "calc", "text"} {
		if servers[name] != "ready" {
			t.Errorf("server %s shows state %q, want ready (servers on the page: %v)", name, servers[name], servers)
		}
	}
	shown := map[string]string{}
	for _, m := range domToolRow.FindAllStringSubmatch(dom, -1) {
		shown[m[1]] = m[2]
	}
	for _, tl := range tools {
		if shown[tl.Name] != tl.Status {
			t.Errorf("tool %s shows %q, want %q as `mcp-hub tools` says", tl.Name, shown[tl.Name], tl.Status)
		}
	}
	if len(shown) != len(tools) {
		t.Errorf("the page lists %d tools, the hub has %d", len(shown), len(tools))
	}
	m := domSearchResult.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no search result in the rendered page:\n%.3000s", dom)
	}
	if got := html.UnescapeString(m[1]); got != searchOut {
		t.Errorf("the search box shows\n%s\n`mcp-hub search %s` prints\n%s", got, query, searchOut)
	}
	if st, err := os.Stat(png); err != nil || st.Size() < 10_000 {
		t.Errorf("screenshot %s: %v (%v bytes)", png, err, st)
	}
}

// TestOAuthServeHTTP: `mcp-hub serve --http` with only auth.oauth {issuer,
// audience} finds the issuer's keys through its metadata and admits
// exactly the good token (acceptance 2, as the hidden test runs it).
func TestOAuthServeHTTP(t *testing.T) {
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	iss := fixture.NewIssuer(t, "", false)
	iss.AddKey("k1", false, true)
	iss.AddKey("stranger", false, false)
	addr := freeAddr(t)
	audience := "http://" + addr + "/mcp"
	cfg := writeConfig(t, fmt.Sprintf("servers:\n  time: {builtin: time}\nauth:\n  oauth: {issuer: %q, audience: %q}\n", iss.URL, audience))
	hub := startChild(t, "hub", []string{envAsMain + "=1"}, self, "--config", cfg, "serve", "--http", addr)
	waitHealthy(t, "http://"+addr+"/healthz")

	post := func(token string) *http.Response {
		req, _ := http.NewRequest("POST", audience, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	none, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"iss": iss.URL, "aud": audience, "sub": "x", "exp": time.Now().Add(time.Minute).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	for _, c := range []struct {
		name, token string
		want        int
	}{
		{"good", iss.Token("k1", audience, nil), 200},
		{"no token", "", 401},
		{"wrong audience", iss.Token("k1", "http://elsewhere/mcp", nil), 401},
		{"expired", iss.Token("k1", audience, jwt.MapClaims{"exp": time.Now().Add(-time.Hour).Unix()}), 401},
		{"unknown key", iss.Token("stranger", audience, nil), 401},
		{"alg none", none, 401},
		{"wrong issuer", iss.Token("k1", audience, jwt.MapClaims{"iss": "http://127.0.0.1:1"}), 401},
	} {
		resp := post(c.token)
		if resp.StatusCode != c.want {
			t.Errorf("%s: %d, want %d\nhub log:\n%s", c.name, resp.StatusCode, c.want, hub.logTail(20))
		}
		if c.token == "" && !strings.Contains(resp.Header.Get("WWW-Authenticate"), `resource_metadata="http://`+addr+`/.well-known/oauth-protected-resource/mcp"`) {
			t.Errorf("no token: WWW-Authenticate = %q", resp.Header.Get("WWW-Authenticate"))
		}
	}
	resp, err := http.Get("http://" + addr + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&meta); err != nil || meta.Resource != audience || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != iss.URL {
		t.Errorf("RFC 9728 metadata: %+v (%v), want resource %s and the issuer %s", meta, err, audience, iss.URL)
	}
}

// TestServeMetricsFlag: a stdio hub serves /metrics on its own listener
// with `serve --metrics`, behind the Host check; its calls are counted.
func TestServeMetricsFlag(t *testing.T) {
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cmd := exec.Command(self, "--config", writeConfig(t, "servers:\n  time: {builtin: time}\n"), "serve", "--metrics", addr)
	cmd.Env = append(os.Environ(), envAsMain+"=1")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	// One tools/call over stdio, then read its answer.
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"e2e","version":"0"}}}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"time__day_of_week","arguments":{"date":"2026-01-01"}}}`+"\n")
	dec := json.NewDecoder(stdout)
	for {
		var msg struct{ ID int }
		if err := dec.Decode(&msg); err != nil {
			t.Fatalf("reading the stdio answers: %v", err)
		}
		if msg.ID == 2 {
			break
		}
	}
	var body string
	fixture.Eventually(t, 30*time.Second, "/metrics counts the stdio call", func() bool {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		body = string(b)
		return strings.Contains(body, `mcp_hub_tool_calls_total{outcome="ok",server="time",tool="day_of_week"} 1`)
	})
	req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
	req.Host = "rebind.example"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("/metrics with a foreign Host: %d, want 403", resp.StatusCode)
	}
}
