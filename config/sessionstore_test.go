package config

import (
	"strings"
	"testing"
)

// TestSessionStoreConfig checks session_store URLs: what is accepted, and
// that a refused one never shows its password.
func TestSessionStoreConfig(t *testing.T) {
	t.Setenv("MCP_HUB_TEST_REDIS_PASSWORD", "s3cret-pw")
	for _, tc := range []struct {
		name, value, wantErr string
	}{
		{"plain", "redis://127.0.0.1:6379/0", ""},
		{"tls, password from the environment", "rediss://:${MCP_HUB_TEST_REDIS_PASSWORD}@redis.example:6380/2", ""},
		{"user and password", "redis://hub:${MCP_HUB_TEST_REDIS_PASSWORD}@127.0.0.1:6379/1", ""},
		{"wrong scheme", "http://127.0.0.1:6379/0", `scheme "http" is not supported`},
		{"bad database", "redis://:${MCP_HUB_TEST_REDIS_PASSWORD}@127.0.0.1:6379/notanumber", "invalid Redis URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseConfig("hub.yaml", []byte("servers: {calc: {builtin: calc}}\nhash_key: a-test-hash-key-of-at-least-32-characters\nsession_store: "+tc.value+"\n"))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseConfig: %v", err)
				}
				if strings.Contains(tc.value, "PASSWORD") && !strings.Contains(strings.Join(cfg.Secrets, " "), "s3cret-pw") {
					t.Errorf("the store's password is not among the secrets to redact")
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("ParseConfig error = %v, want it to say %q", err, tc.wantErr)
			}
			if strings.Contains(err.Error(), "s3cret-pw") {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}
