package config

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestCredentialExpansion: a ${VAR} that expands empty in a credential key
// (auth, session_store, audit.file, a server's headers and oauth) is a
// config error naming the key and the variable, whether the variable is
// unset, empty, blank or has an empty default; list items never vanish.
func TestCredentialExpansion(t *testing.T) {
	const srv = "servers:\n  s: {builtin: time}\n"
	const remote = "servers:\n  r:\n    url: https://mcp.example.com/mcp\n"
	oauth := "auth:\n  oauth:\n    issuer: https://id.example.com\n    audience: https://hub.example.com/mcp\n"
	tests := []struct {
		name, doc, key string // key: the path the error must name ("" = accepted)
	}{
		{"token list item", srv + "auth: {tokens: [\"${CX_VAR}\"]}\n", "auth.tokens[0]"},
		{"second token item", srv + "auth: {tokens: [abcdefgh, \"${CX_VAR}\"]}\n", "auth.tokens[1]"},
		{"token name/value form", srv + "auth:\n  tokens:\n    - {name: ci, token: \"${CX_VAR}\"}\n", "auth.tokens[0].token"},
		{"token block list", srv + "auth:\n  tokens:\n    - ${CX_VAR}\n", "auth.tokens[0]"},
		{"tokens as a whole", srv + "auth:\n  tokens: ${CX_VAR}\n", "auth.tokens"},
		{"auth as a whole", srv + "auth: ${CX_VAR}\n", "auth"},
		{"issuer", srv + "auth:\n  oauth:\n    issuer: ${CX_VAR}\n    audience: https://hub.example.com/mcp\n", "auth.oauth.issuer"},
		{"audience", srv + "auth:\n  oauth:\n    issuer: https://id.example.com\n    audience: ${CX_VAR}\n", "auth.oauth.audience"},
		{"jwks_url", srv + oauth + "    jwks_url: ${CX_VAR}\n", "auth.oauth.jwks_url"},
		{"required scope", srv + oauth + "    required_scopes: [\"${CX_VAR}\"]\n", "auth.oauth.required_scopes[0]"},
		{"required scopes as a whole", srv + oauth + "    required_scopes: ${CX_VAR}\n", "auth.oauth.required_scopes"},
		{"toolset claim", srv + oauth + "    toolset_claim: ${CX_VAR}\n", "auth.oauth.toolset_claim"},
		{"rate limit", srv + "auth:\n  tokens: [abcdefgh]\n  rate_limit: {requests_per_second: \"${CX_VAR}\"}\n", "auth.rate_limit.requests_per_second"},
		{"header value", remote + "    headers: {Authorization: \"Bearer ${CX_VAR}\"}\n", "servers.r.headers.Authorization"},
		{"upstream client secret", remote + "    oauth: {client_id: hub, client_secret: \"${CX_VAR}\"}\n", "servers.r.oauth.client_secret"},
		{"upstream client id", remote + "    oauth: {client_id: \"${CX_VAR}\"}\n", "servers.r.oauth.client_id"},
		{"session store password", srv + "session_store: redis://:${CX_VAR}@127.0.0.1:6379/0\n", "session_store"},
		{"audit file", srv + "audit: {file: \"${CX_VAR}\"}\n", "audit.file"},
		{"JSON header", `{"mcpServers": {"r": {"url": "https://mcp.example.com/mcp", "headers": {"X-Key": "${CX_VAR}"}}}}`, "servers.r.headers.X-Key"},

		{"non-empty default", srv + "auth: {tokens: [\"${CX_VAR:-fallback-token}\"]}\n", ""},
		{"not a credential", "servers:\n  s: {builtin: time, description: \"${CX_VAR}\"}\n", ""},
	}
	values := []struct {
		name      string
		set       bool
		value     string
		wantWords string
	}{
		{"unset", false, "", "is not set"},
		{"empty", true, "", "is empty"},
		{"blank", true, "  ", "is empty"},
	}
	for _, tc := range tests {
		for _, v := range values {
			t.Run(tc.name+"/"+v.name, func(t *testing.T) {
				if v.set {
					t.Setenv("CX_VAR", v.value)
				} else {
					t.Setenv("CX_VAR", "x")
					unsetenv(t, "CX_VAR")
				}
				path := "hub.yaml"
				if strings.HasPrefix(tc.doc, "{") {
					path = "c.json"
				}
				_, err := parseConfig(path, []byte(tc.doc))
				if tc.key == "" && strings.Contains(tc.doc, ":-") && v.value != "" {
					tc.key = "auth.tokens[0]" // a blank value is set: no default, and blank is empty
					v.wantWords = "is empty"
				}
				if tc.key == "" {
					if err != nil {
						t.Fatalf("refused: %v", err)
					}
					return
				}
				if err == nil {
					t.Fatalf("accepted:\n%s", tc.doc)
				}
				var ce *Error
				if !errors.As(err, &ce) {
					t.Fatalf("error is %T, want *Error (exit code 2): %v", err, err)
				}
				msg := err.Error()
				if !strings.Contains(msg, tc.key+": environment variable CX_VAR "+v.wantWords) {
					t.Errorf("error does not name %s and CX_VAR (%s):\n%s", tc.key, v.wantWords, msg)
				}
			})
		}
	}
}

// TestCredentialEmptyDefault: ${VAR:-} in a credential is no default.
func TestCredentialEmptyDefault(t *testing.T) {
	unsetenv(t, "CX_NONE")
	_, err := parseConfig("hub.yaml", []byte("servers:\n  s: {builtin: time}\nauth: {tokens: [\"${CX_NONE:-}\"]}\n"))
	if err == nil || !strings.Contains(err.Error(), "auth.tokens[0]: environment variable CX_NONE is not set and its default is empty") {
		t.Fatalf("err = %v", err)
	}
}

// TestEmptyCredentialLiterals: written empty, a credential list item or
// token is an error too (as null, yaml.v3 would drop the item).
func TestEmptyCredentialLiterals(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"empty token", "auth: {tokens: [\"\"]}\n", "auth.tokens[0] is empty"},
		{"null token", "auth: {tokens: [~]}\n", "auth.tokens[0] is empty"},
		{"token without value", "auth: {tokens: [{name: ci}]}\n", "auth.tokens[0]: the token is empty"},
		{"empty scope", "auth: {oauth: {issuer: https://id.example.com, audience: a, required_scopes: [read, \"\"]}}\n", "auth.oauth.required_scopes[1] is empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("hub.yaml", []byte("servers:\n  s: {builtin: time}\n"+tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestEmptyListItemKept: outside credentials an unset variable still only
// warns, and a list item that expands empty stays in place.
func TestEmptyListItemKept(t *testing.T) {
	unsetenv(t, "CX_NONE")
	cfg, err := parseConfig("hub.yaml", []byte("servers:\n  s:\n    command: echo\n    args: [a, \"${CX_NONE}\", b]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Servers["s"].Args; len(got) != 3 || got[1] != "" || got[2] != "b" {
		t.Errorf("args = %q, want [a \"\" b]", got)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "CX_NONE is not set") {
		t.Errorf("warnings = %q", cfg.Warnings)
	}
}

// unsetenv unsets name for the test, and restores it after.
func unsetenv(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "") // restores the old value at the end
	os.Unsetenv(name)
}

// TestDefaultNotASecret: a ${VAR:-default} default is written in the file,
// so it is not redacted; a variable's value is.
func TestDefaultNotASecret(t *testing.T) {
	unsetenv(t, "CX_NONE")
	t.Setenv("CX_SET", "from-the-environment")
	cfg, err := parseConfig("hub.yaml", []byte("servers:\n  s: {builtin: time, description: \"${CX_NONE:-a default value} ${CX_SET}\"}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(cfg.Secrets, "a default value") || !slices.Contains(cfg.Secrets, "from-the-environment") {
		t.Errorf("secrets = %q", cfg.Secrets)
	}
}
