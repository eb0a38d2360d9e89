package hub

// Values from clients and upstreams on their way to the audit file, the
// logs, the metrics and /healthz: bounded, without control characters,
// and with the config's secrets redacted however they were escaped.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// slRawSession opens an HTTP session on /mcp at url with raw POSTs and
// returns the headers that name it.
func slRawSession(t *testing.T, url string, headers map[string]string) map[string]string {
	t.Helper()
	resp := secPost(t, url, secInit, headers)
	io.Copy(io.Discard, resp.Body)
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, id)
	}
	out := map[string]string{"Mcp-Session-Id": id, "Mcp-Protocol-Version": "2025-06-18"}
	for k, v := range headers {
		out[k] = v
	}
	resp = secPost(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, out)
	io.Copy(io.Discard, resp.Body)
	return out
}

// slCall POSTs one tools/call whose params are written as given (raw
// JSON, with whatever escapes) and returns the answer's body.
func slCall(t *testing.T, url string, headers map[string]string, id int, params string) string {
	t.Helper()
	resp := secPost(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params), headers)
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
	cfg.Audit = Audit{File: filepath.Join(t.TempDir(), "audit.jsonl"), IncludeArguments: true}
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
	cfg.Auth.Tokens = []Token{{Name: "ci", Value: "ci-token-health-1234"}}
	cfg.Auth.OAuth.RequiredScopes = []string{"mcp:tools"}
	cfg.Auth.OAuth.ToolsetClaim = "groups"
	cfg.Toolsets = map[string]*Toolset{"ops": {Servers: map[string]*ToolSelection{"gw": {All: true}}}}
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
		metrics, _, _ := gwGet(t, base+"/metrics", c.headers)
		if (metrics == http.StatusOK) != c.allowed {
			t.Fatalf("%s: /metrics %d: the test's premise does not hold", c.name, metrics)
		}
		status, body, _ := gwGet(t, base+"/healthz", c.headers)
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
