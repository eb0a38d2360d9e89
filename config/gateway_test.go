package config

import (
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
