package gateway

// Values from clients and upstreams on their way to the audit file, the
// logs, the metrics and /healthz: bounded, without control characters,
// and with the config's secrets redacted however they were escaped.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// slRawSession opens an HTTP session on /mcp at url with raw POSTs and
// returns the headers that name it.
func slRawSession(t *testing.T, url string, headers map[string]string) map[string]string {
	t.Helper()
	resp := fixture.Post(t, url, fixture.RawInitialize, headers)
	io.Copy(io.Discard, resp.Body)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, id)
	}
	out := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"}
	for k, v := range headers {
		out[k] = v
	}
	resp = fixture.Post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, out)
	io.Copy(io.Discard, resp.Body)
	return out
}

// slCall POSTs one tools/call whose params are written as given (raw
// JSON, with whatever escapes) and returns the answer's body.
func slCall(t *testing.T, url string, headers map[string]string, id int, params string) string {
	t.Helper()
	resp := fixture.Post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params), headers)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("tools/call %d: %d %s", id, resp.StatusCode, body)
	}
	return string(body)
}

// jsonEscapeAll writes every character of s as a \uXXXX escape (UTF-16
// surrogate pairs above the BMP): the form that no list of a secret's
// escaped variants could cover.
func jsonEscapeAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0xffff {
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			continue
		}
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}

// TestAuditRedactsEscapedSecrets: with include_arguments, a secret of the
// config never reaches the audit file, however the client's JSON escaped
// it (\u0026, \u0041 for a plain letter, \/, every character escaped,
// surrogate pairs) or wherever it sits (a value, a key, inside a longer
// string, a number).
func TestAuditRedactsEscapedSecrets(t *testing.T) {
	t.Parallel()
	secrets := []string{
		`tok&en<9>"q"\back/slash`,
		"pässwörd-ünïcode-🔑",
		"AKIAPLAINLETTERS42",
		"31415926535897932",
	}
	cfg := gwConfig()
	cfg.Secrets = secrets
	cfg.Audit = config.Audit{File: filepath.Join(t.TempDir(), "audit.jsonl"), IncludeArguments: true}
	_, base, _ := gwHub(t, cfg, &gwUpstream{})
	url := base + "/mcp"
	headers := slRawSession(t, url, nil)

	amp, uni, plain, num := secrets[0], secrets[1], secrets[2], secrets[3]
	argsList := []string{
		// Go's own escaping of &, <, > and the required escapes of " and \.
		`{"text":"` + strings.NewReplacer("&", `\u0026`, "<", `\u003c`, ">", `\u003e`, `"`, `\"`, `\`, `\\`).Replace(amp) + `"}`,
		// / written as \/, the quotes as \u0022.
		`{"text":"before ` + strings.NewReplacer(`"`, `\u0022`, `\`, `\u005c`, "/", `\/`).Replace(amp) + ` after"}`,
		// every character escaped, the key holding the secret.
		`{"` + jsonEscapeAll(amp) + `":"k"}`,
		`{"text":"` + jsonEscapeAll(uni) + `"}`,
		`{"text":"` + uni + `"}`,
		// a plain letter escaped: \u0041 for A.
		`{"text":"\u0041` + plain[1:] + `"}`,
		`{"nested":[{"deep":"x` + jsonEscapeAll(plain) + `y"}]}`,
		// a secret written as a JSON number.
		`{"n":` + num + `}`,
	}
	for i, args := range argsList {
		if !json.Valid([]byte(args)) {
			t.Fatalf("test arguments %d are not JSON: %s", i, args)
		}
		slCall(t, url, headers, 10+i, `{"name":"gw__ok","arguments":`+args+`}`)
	}
	data, err := os.ReadFile(cfg.Audit.File)
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e auditEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line is not JSON: %s", line)
		}
		if e.Method != "tools/call" {
			continue
		}
		calls++
		// The decoded form of the arguments, and the raw line: a secret in
		// neither, in no escaped form either.
		var v any
		if err := json.Unmarshal(e.Arguments, &v); err != nil {
			t.Fatalf("arguments are not JSON: %s", e.Arguments)
		}
		decoded, _ := json.Marshal(v)
		for _, s := range secrets {
			for _, form := range []string{s, strings.ReplaceAll(s, "&", `\u0026`), s[:len(s)/2]} {
				if strings.Contains(line, form) || strings.Contains(string(decoded), form) {
					t.Errorf("secret %q (as %q) in the audit line: %s", s, form, line)
				}
			}
		}
		if !strings.Contains(line, "[REDACTED]") {
			t.Errorf("nothing redacted in %s", line)
		}
	}
	if calls != len(argsList) {
		t.Errorf("%d tools/call lines, want %d", calls, len(argsList))
	}
}

// TestHealthzDetailsFollowAuthorization: /healthz's details (servers,
// their last errors, the reload error) go only to a principal that the
// guard lets through to /mcp and /metrics; a verified token that gets 403
// there (a missing required scope, a toolset claim naming no configured
// toolset) sees only the status, like one with no token at all. Tokens
// from a real issuer over HTTP.
func TestHealthzDetailsFollowAuthorization(t *testing.T) {
	t.Parallel()
	iss := fixture.NewIssuer(t, "", false)
	iss.AddKey("k1", false, true)
	cfg := oauthConfig(iss)
	cfg.Auth.Tokens = []config.Token{{Name: "ci", Value: "ci-token-health-1234"}}
	cfg.Auth.OAuth.RequiredScopes = []string{"mcp:tools"}
	cfg.Auth.OAuth.ToolsetClaim = "groups"
	cfg.Toolsets = map[string]*config.Toolset{"ops": {Servers: map[string]*config.ToolSelection{"gw": {All: true}}}}
	_, base, _ := gwHub(t, cfg, &gwUpstream{})
	token := func(claims jwt.MapClaims) map[string]string {
		return map[string]string{"Authorization": "Bearer " + iss.Token("k1", testAudience, claims)}
	}
	for _, c := range []struct {
		name    string
		headers map[string]string
		allowed bool
	}{
		{"no token", nil, false},
		{"bad token", map[string]string{"Authorization": "Bearer nope"}, false},
		{"missing scope", token(jwt.MapClaims{"scope": "other", "groups": []string{"ops"}}), false},
		{"no configured toolset", token(jwt.MapClaims{"groups": []string{"staff"}}), false},
		{"no toolset claim", token(nil), false},
		{"scope and toolset", token(jwt.MapClaims{"groups": []string{"ops"}}), true},
		{"static token", map[string]string{"Authorization": "Bearer ci-token-health-1234"}, true},
	} {
		metrics, _, _ := fixture.Get(t, base+"/metrics", c.headers)
		if (metrics == http.StatusOK) != c.allowed {
			t.Fatalf("%s: /metrics %d: the test's premise does not hold", c.name, metrics)
		}
		status, body, _ := fixture.Get(t, base+"/healthz", c.headers)
		var got map[string]any
		if err := json.Unmarshal([]byte(body), &got); status != http.StatusOK || err != nil {
			t.Fatalf("%s: /healthz %d %q", c.name, status, body)
		}
		_, details := got["servers"]
		switch {
		case c.allowed && !details:
			t.Errorf("%s: /healthz without details for a principal allowed /metrics: %s", c.name, body)
		case !c.allowed && (details || len(got) != 1 || got["status"] == nil):
			t.Errorf("%s: /healthz shows %s to a principal refused /metrics (%d), want only the status", c.name, body, metrics)
		}
	}
}

// TestMetricsToolLabelsBounded: an upstream (a real MCP server over HTTP)
// lists a tool with a 1 MiB name full of control characters, then renames
// and removes tools. /metrics stays small and clean, keeps series only for
// the tools in the catalog, and promtool still accepts it.
func TestMetricsToolLabelsBounded(t *testing.T) {
	t.Parallel()
	long := "evil\x1b[31m\r\n" + strings.Repeat("n", 1<<20)
	up := mcp.NewServer(&mcp.Implementation{Name: "web", Version: "1"}, nil)
	add := func(name string) {
		up.AddTool(&mcp.Tool{Name: name, Description: "a tool", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	for _, name := range []string{"stable", "old_name", long} {
		add(name)
	}
	web := &config.Server{Upstream: config.Upstream{URL: fixture.ServeHTTP(t, up)}}
	web.Name = "web"
	h, _ := secHub(t, fixture.RestartingConfig(web))
	srv := httptest.NewServer(h.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	cs, err := fixture.HTTPClient(t, srv.URL+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	longExposed := hub.ExposedName("web", long)
	call := func(name string) {
		t.Helper()
		if res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: name}); err != nil || res.IsError {
			t.Fatalf("call %s: %v %v", name, err, res)
		}
	}
	scrape := func() string {
		t.Helper()
		status, body, _ := fixture.Get(t, srv.URL+"/metrics", nil)
		if status != http.StatusOK {
			t.Fatalf("/metrics: %d", status)
		}
		for _, line := range strings.Split(body, "\n") {
			if len(line) > 2*maxToolLabel+200 {
				t.Errorf("/metrics line of %d bytes: %.200s", len(line), line)
			}
		}
		if strings.ContainsAny(body, "\x1b\r") {
			t.Error("a control character in /metrics")
		}
		return body
	}
	series := func(body, tool string) bool {
		return strings.Contains(body, `server="web",tool="`+tool+`"`)
	}
	for _, name := range []string{"web__stable", "web__old_name", longExposed} {
		call(name)
	}
	body := scrape()
	longLabel := clean.Line(long, maxToolLabel)
	if !series(body, "stable") || !series(body, "old_name") || !series(body, longLabel) {
		t.Fatalf("/metrics lacks the calls' series:\n%s", grepLines(body, "mcp_hub_tool_calls_total"))
	}

	// Rename old_name to new_name and drop the long one: the server tells
	// the hub (tools/list_changed), the hub rebuilds its catalog.
	up.RemoveTools("old_name", long)
	add("new_name")
	fixture.Eventually(t, 10*time.Second, "the hub's catalog follows the upstream", func() bool {
		_, gone := h.hub.Catalog().Tool("web__old_name")
		_, added := h.hub.Catalog().Tool("web__new_name")
		return added && !gone
	})
	call("web__new_name")
	body = scrape()
	if !series(body, "stable") || !series(body, "new_name") || series(body, "old_name") || series(body, longLabel) {
		t.Errorf("after the rename, /metrics has:\n%s\nwant stable and new_name only", grepLines(body, "mcp_hub_tool_calls_total"))
	}

	promtool := needProgram(t, "promtool", "prometheus")
	file := filepath.Join(t.TempDir(), "metrics.txt")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("sh", "-c", fmt.Sprintf("%s check metrics < %s", promtool, file)).CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestToolLabelCapped: past maxToolSeries catalog tools, calls count under
// tool "other" of their server; a label is cleaned.
func TestToolLabelCapped(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		i    int
		want string
	}{
		{"read_file", 0, "read_file"},
		{"read_file", maxToolSeries - 1, "read_file"},
		{"read_file", maxToolSeries, otherTool},
		{"a\x1bb", 0, "a\uFFFDb"},
	} {
		if got := toolLabel(c.name, c.i); got != c.want {
			t.Errorf("toolLabel(%q, %d) = %q, want %q", c.name, c.i, got, c.want)
		}
	}
}

func grepLines(body, substr string) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
