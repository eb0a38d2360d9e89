package config

import (
	"slices"
	"strings"
	"testing"
)

// TestGatewayConfig: the team-deployment keys parse, and mistakes in them
// are config errors that name the key, the line and the fix.
func TestGatewayConfig(t *testing.T) {
	const servers = "servers:\n  time: {builtin: time}\n"
	cases := []struct {
		name, yaml string
		wantErr    string // "" = valid
		check      func(t *testing.T, c *Config)
	}{
		{"tokens: plain and named", servers + "auth:\n  tokens:\n    - plain-token-1\n    - {name: ci, token: ci-token-1}\n", "", func(t *testing.T, c *Config) {
			if len(c.Auth.Tokens) != 2 || c.Auth.Tokens[0] != (Token{Value: "plain-token-1"}) || c.Auth.Tokens[1] != (Token{Name: "ci", Value: "ci-token-1"}) {
				t.Errorf("tokens = %+v", c.Auth.Tokens)
			}
			if !strings.Contains(strings.Join(c.Secrets, " "), "ci-token-1") {
				t.Error("a literal token is not among the secrets to redact")
			}
		}},
		{"full team section", servers + `auth:
  oauth: {issuer: "https://login.example.com/realms/t", audience: "https://hub.example.com/mcp", required_scopes: [mcp], toolset_claim: groups}
  rate_limit: {requests_per_second: 5, burst: 10, principals: {"token:ci": {requests_per_second: 0}}}
audit: {file: /tmp/a.jsonl, max_size_mb: 10, max_backups: 2, include_arguments: true}
telemetry: {otlp_endpoint: "http://127.0.0.1:4318", service_name: hub}
`, "", func(t *testing.T, c *Config) {
			if c.Auth.OAuth.ToolsetClaim != "groups" || c.Auth.RateLimit.Burst != 10 || c.Auth.RateLimit.Principals["token:ci"].RequestsPerSecond != 0 ||
				c.Audit.MaxBackups != 2 || c.Telemetry.ServiceName != "hub" {
				t.Errorf("parsed %+v %+v %+v %+v", c.Auth.OAuth, c.Auth.RateLimit, c.Audit, c.Telemetry)
			}
		}},
		{"token entry with a typo", servers + "auth:\n  tokens:\n    - {nme: ci, token: x}\n", "hub.yaml:5: auth.tokens: unknown key 'nme'", nil},
		{"duplicate token names", servers + "auth:\n  tokens: [{name: a, token: x}, {name: a, token: y}]\n", "the name 'a' is given twice", nil},
		{"oauth without audience", servers + "auth:\n  oauth: {issuer: https://login.example.com}\n", "auth.oauth.audience is required", nil},
		{"oauth without issuer", servers + "auth:\n  oauth: {audience: x}\n", "auth.oauth.issuer is required", nil},
		{"plain http issuer off loopback", servers + "auth:\n  oauth: {issuer: http://login.example.com, audience: x}\n", "must use https", nil},
		{"unknown oauth key", servers + "auth:\n  oauth: {issuer: https://a.example, audience: x, jwks_uri: y}\n", "unknown key 'jwks_uri'; did you mean 'jwks_url'?", nil},
		{"negative rate", servers + "auth:\n  rate_limit: {requests_per_second: -1}\n", "must not be negative", nil},
		{"audit options without a file", servers + "audit: {include_arguments: true}\n", "audit: set 'file'", nil},
		{"bad OTLP endpoint", servers + "telemetry: {otlp_endpoint: 127.0.0.1:4318}\n", "telemetry.otlp_endpoint", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parseConfig("hub.yaml", []byte(c.yaml))
			if c.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				c.check(t, cfg)
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}

// TestAuthWeakening: what a reload must not apply silently
// (Auth.Weakening), and `auth: none`, which only a literal in the file
// says.
func TestAuthWeakening(t *testing.T) {
	oauth := func(mod func(o *OAuth)) *OAuth {
		o := &OAuth{Issuer: "https://login.example.com", Audience: "https://hub.example.com/mcp", RequiredScopes: []string{"mcp", "read"}, ToolsetClaim: "groups"}
		if mod != nil {
			mod(o)
		}
		return o
	}
	two := []Token{{Name: "a", Value: "token-a-1234"}, {Name: "b", Value: "token-b-1234"}}
	cur := Auth{Tokens: two, OAuth: oauth(nil)}
	for _, c := range []struct {
		name string
		next Auth
		want string // "" = not weaker
	}{
		{"the same", Auth{Tokens: two, OAuth: oauth(nil)}, ""},
		{"a token added", Auth{Tokens: append(slices.Clone(two), Token{Value: "token-c-1234"}), OAuth: oauth(nil)}, ""},
		{"a token rotated", Auth{Tokens: []Token{two[0], {Name: "b", Value: "token-b-5678"}}, OAuth: oauth(nil)}, ""},
		{"a scope added, rate limit", Auth{Tokens: two, OAuth: oauth(func(o *OAuth) { o.RequiredScopes = append(o.RequiredScopes, "write") }), RateLimit: &RateLimit{Rate: Rate{RequestsPerSecond: 1}}}, ""},
		{"no auth", Auth{}, "auth is removed"},
		{"auth: none", Auth{None: true}, "auth is removed"},
		{"fewer tokens", Auth{Tokens: two[:1], OAuth: oauth(nil)}, "auth.tokens: 1 tokens where there were 2"},
		{"no issuer", Auth{Tokens: two}, "auth.oauth is removed"},
		{"another issuer", Auth{Tokens: two, OAuth: oauth(func(o *OAuth) { o.Issuer = "https://other.example.com" })}, "auth.oauth.issuer changes"},
		{"another audience", Auth{Tokens: two, OAuth: oauth(func(o *OAuth) { o.Audience = "https://other.example.com/mcp" })}, "auth.oauth.audience changes"},
		{"a jwks_url", Auth{Tokens: two, OAuth: oauth(func(o *OAuth) { o.JWKSURL = "https://keys.example.com" })}, "auth.oauth.jwks_url changes"},
		{"another toolset claim", Auth{Tokens: two, OAuth: oauth(func(o *OAuth) { o.ToolsetClaim = "" })}, "auth.oauth.toolset_claim changes"},
		{"a scope dropped", Auth{Tokens: two, OAuth: oauth(func(o *OAuth) { o.RequiredScopes = []string{"mcp"} })}, "a scope is no longer required"},
	} {
		got := strings.Join(cur.Weakening(c.next), "; ")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: Weakening = %q, want %q", c.name, got, c.want)
		}
		if strings.Contains(got, "token-") || strings.Contains(got, "example.com") {
			t.Errorf("%s: the reason shows a value: %q", c.name, got)
		}
	}
	if got := (Auth{}).Weakening(Auth{}); got != nil {
		t.Errorf("no auth to no auth: %q", got)
	}

	const servers = "servers:\n  time: {builtin: time}\n"
	cfg, err := parseConfig("hub.yaml", []byte(servers+"auth: none\n"))
	if err != nil || !cfg.Auth.None || cfg.Auth.Configured() {
		t.Fatalf("auth: none: %+v, %v; want None and no auth", cfg.Auth, err)
	}
	t.Setenv("MCP_HUB_TEST_AUTH", "none")
	if cfg, err := parseConfig("hub.yaml", []byte(servers+"auth: ${MCP_HUB_TEST_AUTH}\n")); err == nil {
		t.Errorf("auth: none from a variable was accepted: %+v", cfg.Auth)
	}
	if _, err := parseConfig("hub.yaml", []byte(servers+"auth: off\n")); err == nil {
		t.Error("auth: off was accepted")
	}
}
