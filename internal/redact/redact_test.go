package redact

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
)

// TestRedactJSONRPCError: a JSON-RPC error that quotes a secret, in its
// message or its data, comes out of Redactor.Error redacted, and so does
// what errors.As finds in the chain (what the hub passes to clients).
func TestRedactJSONRPCError(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	r := New([]string{key})
	orig := &jsonrpc.Error{Code: -32001, Message: "bad key " + key, Data: json.RawMessage(`{"key":"` + key + `","nested":["x ` + key + `"]}`)}
	for name, err := range map[string]error{
		"bare":    orig,
		"wrapped": fmt.Errorf("calling tools/call: %w", orig),
		"data only": &jsonrpc.Error{Code: 1, Message: "no secret here",
			Data: json.RawMessage(`{"k":"\u0073k-live-0123456789abcdef"}`)}, // escaped in JSON
	} {
		red := r.Error(err)
		rpc, ok := errors.AsType[*jsonrpc.Error](red)
		if !ok {
			t.Fatalf("%s: the JSON-RPC error is gone from the chain", name)
		}
		for where, text := range map[string]string{"Error()": red.Error(), "message": rpc.Message, "data": string(rpc.Data)} {
			if strings.Contains(text, key) || strings.Contains(text, "0123456789abcdef") {
				t.Errorf("%s: %s still holds the key: %s", name, where, text)
			}
		}
		if rpc.Code != orig.Code && name != "data only" {
			t.Errorf("%s: code %d, want %d", name, rpc.Code, orig.Code)
		}
	}
	clean := &jsonrpc.Error{Code: 3, Message: "fine", Data: json.RawMessage(`{"a":1}`)}
	if got := r.Error(clean); got != error(clean) {
		t.Errorf("an error without secrets was changed: %v", got)
	}
}

// TestRedactLongestFirst: a secret that contains another is replaced
// whole, however the secrets were given.
func TestRedactLongestFirst(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		secrets  []string
		in, want string
	}{
		{[]string{"abc", "abcdef"}, "x abcdef y abc", "x [REDACTED] y [REDACTED]"},
		{[]string{"abcd", "xxabcdxx", "abcdxx"}, "1 xxabcdxx 2 abcdxx 3 abcd", "1 [REDACTED] 2 [REDACTED] 3 [REDACTED]"},
	} {
		if got := New(tc.secrets).String(tc.in); got != tc.want {
			t.Errorf("New(%q).String(%q) = %q, want %q", tc.secrets, tc.in, got, tc.want)
		}
	}
}

// TestRedactErrorKeepsChain: a redacted error still matches errors.Is.
func TestRedactErrorKeepsChain(t *testing.T) {
	t.Parallel()
	r := New([]string{"abc", "abcdef"})
	base := context.DeadlineExceeded
	if err := r.Error(fmt.Errorf("abcdef: %w", base)); !errors.Is(err, base) || strings.Contains(err.Error(), "abc") {
		t.Errorf("redacted error %v lost its chain or kept the secret", err)
	}
}

// TestLooksLikeKey: every well-known credential format is a key, whichever
// layer first listed it, and paths, URLs and words are not.
func TestLooksLikeKey(t *testing.T) {
	t.Parallel()
	jwt := "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	keys := []string{
		"sk-proj-Abc123Def456", "sk_live_0123456789", "ghp_0123456789abcdefABCDEF", "github_pat_11ABCDEFG0123",
		"xoxb-1234-5678-abcdefgh", "glpat-abcdefgh1234", "AKIAABCDEFGHIJKL", "AIzaSyAbcdefgh12",
		"ya29.a0AfH6SMBxyz12", "pat-abcdefgh1234", "ntn_abcdefgh1234", "secret_abcdefgh1234",
		"lin_api_abcdefgh1234", "pplx-abcdefgh1234", "tvly-abcdefgh1234", jwt, "Zq8f3K2m9X1pL7vB4nR6tY0wS5dH",
	}
	for _, k := range keys {
		if !LooksLikeKey(k) {
			t.Errorf("LooksLikeKey(%q) = false", k)
		}
		if !HasKeyPrefix(k) && k != jwt && k != "Zq8f3K2m9X1pL7vB4nR6tY0wS5dH" {
			t.Errorf("HasKeyPrefix(%q) = false", k)
		}
	}
	for _, s := range []string{"sk-short", "pat-", "/tmp/data2024/x", "https://example.com/sk-proj-Abc123Def456",
		"@modelcontextprotocol/server-github", "server-everything-but-longer-name", "mcp-server-filesystem", "-y"} {
		if LooksLikeKey(s) {
			t.Errorf("LooksLikeKey(%q) = true", s)
		}
	}
}

// TestSecretName: flags, env variables and headers named like a
// credential, in any case.
func TestSecretName(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"--api-key", "GITHUB_TOKEN", "--password", "client_secret", "X-Auth", "--credentials",
		"Cookie", "SESSION_ID", "--bearer"} {
		if !SecretName(n) {
			t.Errorf("SecretName(%q) = false", n)
		}
	}
	for _, n := range []string{"--port", "DEBUG", "--verbose", "HOME", "--url"} {
		if SecretName(n) {
			t.Errorf("SecretName(%q) = true", n)
		}
	}
}
