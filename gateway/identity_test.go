package gateway

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/redis/go-redis/v9"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// hmacHex is HMAC-SHA256 of v under key, hex-encoded.
func hmacHex(key, v string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(v))
	return hex.EncodeToString(m.Sum(nil))
}

// TestOAuthPrincipalsNamespaced: a token naming nobody is refused; an
// OAuth user, an OAuth client and a static token of the same name are
// three principals, each with its own sessions and rate limit.
func TestOAuthPrincipalsNamespaced(t *testing.T) {
	t.Parallel()
	iss := fixture.NewIssuer(t, "", false)
	iss.AddKey("k1", false, true)
	cfg := oauthConfig(iss)
	cfg.Auth.Tokens = []config.Token{{Name: "ci", Value: "static-ci-token-1234"}}
	_, url, _ := gwHub(t, cfg, &gwUpstream{})

	t.Run("no subject", func(t *testing.T) {
		for _, claims := range []jwt.MapClaims{{"sub": nil}, {"sub": ""}, {"sub": nil, "client_id": "", "azp": 7}} {
			resp := oauthInit(t, url+"/mcp", iss.Token("k1", testAudience, claims))
			body, _ := io.ReadAll(resp.Body)
			challenge := resp.Header.Get("WWW-Authenticate")
			if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) ||
				!strings.Contains(challenge, `error_description="the access token has no sub, client_id or azp claim`) {
				t.Errorf("claims %v: %d %q (%s), want 401 invalid_token saying the token has no subject", claims, resp.StatusCode, challenge, body)
			}
		}
	})

	t.Run("client_id is not sub", func(t *testing.T) {
		user := iss.Token("k1", testAudience, jwt.MapClaims{"sub": "alice"})
		for _, client := range []string{
			iss.Token("k1", testAudience, jwt.MapClaims{"sub": nil, "client_id": "alice"}),
			iss.Token("k1", testAudience, jwt.MapClaims{"sub": nil, "azp": "alice"}),
		} {
			for _, pair := range [][2]string{{user, client}, {client, user}} {
				owner, other := pair[0], pair[1]
				cs, err := fixture.HTTPClient(t, url+"/mcp", map[string]string{"Authorization": "Bearer " + owner})
				if err != nil {
					t.Fatal(err)
				}
				hdr := map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": cs.InitializeResult().ProtocolVersion}
				const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
				hdr["Authorization"] = "Bearer " + other
				if resp := fixture.Post(t, url+"/mcp", list, hdr); resp.StatusCode == http.StatusOK {
					t.Errorf("another principal named alice used the session: %d", resp.StatusCode)
				}
				hdr["Authorization"] = "Bearer " + owner
				if resp := fixture.Post(t, url+"/mcp", list, hdr); resp.StatusCode != http.StatusOK {
					t.Errorf("the owner's own request: %d", resp.StatusCode)
				}
			}
		}
	})

	t.Run("OAuth ci does not share static ci's rate limit", func(t *testing.T) {
		// The static token ci has a tight override; everyone else the default.
		limited := oauthConfig(iss)
		limited.Auth.Tokens = cfg.Auth.Tokens
		limited.Auth.RateLimit = &config.RateLimit{Rate: config.Rate{RequestsPerSecond: 0.01, Burst: 3}, Principals: map[string]config.Rate{"token:ci": {RequestsPerSecond: 0.01, Burst: 1}}}
		_, url, _ := gwHub(t, limited, &gwUpstream{})
		get := func(tok string) int {
			status, _, _ := fixture.Get(t, url+"/metrics", map[string]string{"Authorization": "Bearer " + tok})
			return status
		}
		if get("static-ci-token-1234") != 200 || get("static-ci-token-1234") != http.StatusTooManyRequests {
			t.Fatal("the static token ci is not held to its override of burst 1")
		}
		oauthCI := iss.Token("k1", testAudience, jwt.MapClaims{"sub": "ci"})
		for i := range 3 {
			if status := get(oauthCI); status != 200 {
				t.Fatalf("OAuth subject ci, request %d of the default burst 3: %d (the static token's bucket or override?)", i+1, status)
			}
		}
		if status := get(oauthCI); status != http.StatusTooManyRequests {
			t.Errorf("OAuth subject ci past the default burst: %d, want 429", status)
		}
	})
}

// TestIdentityConfig: principal ids in rate_limit are namespaced, and
// hash_key is either set properly or left out (never with session_store).
func TestIdentityConfig(t *testing.T) {
	t.Setenv("MCP_HUB_TEST_EMPTY_KEY", "")
	const servers = "servers: {calc: {builtin: calc}}\n"
	for _, c := range []struct{ name, yaml, wantErr string }{
		{"namespaced rate limit names", servers + "auth: {rate_limit: {requests_per_second: 1, principals: {\"token:ci\": {requests_per_second: 0}, \"oauth:https://i.example#ci\": {requests_per_second: 2}, \"client:https://i.example#bot\": {requests_per_second: 2}}}}\n", ""},
		{"a bare name in rate_limit that names no token", servers + "auth:\n  rate_limit:\n    requests_per_second: 1\n    principals: {ci: {requests_per_second: 0}}\n", "hub.yaml:5: auth.rate_limit.principals: 'ci' names no token of auth.tokens"},
		{"a bare token name in rate_limit", servers + "auth:\n  tokens: [{name: ci, token: ci-token-123456}]\n  rate_limit:\n    requests_per_second: 1\n    principals: {ci: {requests_per_second: 0}}\n", ""},
		{"hash_key from an empty variable", servers + "hash_key: ${MCP_HUB_TEST_EMPTY_KEY}\n", "hub.yaml:2: hash_key: environment variable MCP_HUB_TEST_EMPTY_KEY is empty"},
		{"hash_key from an unset variable", servers + "hash_key: ${MCP_HUB_TEST_UNSET_KEY_VAR}\n", "hub.yaml:2: hash_key: environment variable MCP_HUB_TEST_UNSET_KEY_VAR is not set"},
		{"hash_key written empty", servers + "hash_key: \"\"\n", "hub.yaml:2: hash_key is empty"},
		{"short hash_key", servers + "hash_key: tiny-key\n", "hub.yaml:2: hash_key is too short"},
		{"session_store without hash_key", servers + "session_store: redis://127.0.0.1:6379/0\n", "hub.yaml:2: session_store needs hash_key"},
		{"session_store with hash_key", servers + "session_store: redis://127.0.0.1:6379/0\nhash_key: 0123456789abcdef0123456789abcdef\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := config.Parse("hub.yaml", []byte(c.yaml), builtin.Names())
			if c.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseConfig: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("ParseConfig error = %v, want %q", err, c.wantErr)
			}
		})
	}
}

// TestHashKeyFile: without hash_key the hub generates a key, keeps it
// 0600 in its state folder, reuses it on restart, and never follows a
// symbolic link there; a static token's principal id is keyed with it.
func TestHashKeyFile(t *testing.T) {
	t.Parallel()
	const token = "password123"
	start := func(stateDir string) (*Gateway, error) {
		cfg := gwConfig()
		cfg.Auth.Tokens = []config.Token{{Value: token}}
		return New(fixture.Context(t), cfg, Options{Hub: hub.Options{Builtin: (&gwUpstream{}).builtin(fixture.NewServers())}, StateDir: stateDir})
	}
	idOf := func(h *Gateway) string { return h.authn().tokens[0].principal.ID }

	dir := filepath.Join(t.TempDir(), "state")
	h, err := start(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := idOf(h)
	h.Close()
	path := filepath.Join(dir, HashKeyFile)
	st, err := os.Lstat(path)
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %s: %v %v, want a regular file of mode 0600", path, st, err)
	}
	raw, _ := os.ReadFile(path)
	key, _ := hex.DecodeString(strings.TrimSpace(string(raw)))
	plain := sha256.Sum256([]byte(token))
	if first != "token:hmac:"+hmacHex(string(key), token) || strings.Contains(first, hex.EncodeToString(plain[:])) {
		t.Errorf("principal id %q, want token:hmac: and the HMAC of the token under the kept key", first)
	}
	if h, err = start(dir); err != nil {
		t.Fatal(err)
	}
	if again := idOf(h); again != first {
		t.Errorf("after a restart the principal id is %q, was %q: the key was not reused", again, first)
	}
	h.Close()

	// A link where the key belongs is refused, whether it points at a file
	// (never read) or nowhere (never created through).
	for _, c := range []struct {
		name   string
		target func(dir string) string
	}{
		{"to a key-like file", func(dir string) string {
			p := filepath.Join(dir, "elsewhere")
			os.WriteFile(p, []byte(strings.Repeat("ab", hashKeyBytes)+"\n"), 0o600)
			return p
		}},
		{"dangling", func(dir string) string { return filepath.Join(dir, "missing") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			target := c.target(dir)
			before, _ := os.ReadFile(target)
			if err := os.Symlink(target, filepath.Join(dir, HashKeyFile)); err != nil {
				t.Fatal(err)
			}
			if h, err := start(dir); err == nil {
				h.Close()
				t.Fatal("the hub started with its key file a symbolic link")
			} else if !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("error %v, want it to say the key file is a symbolic link", err)
			}
			if after, _ := os.ReadFile(target); string(after) != string(before) {
				t.Errorf("the link's target changed: %q", after)
			}
		})
	}
	t.Run("readable by others", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, HashKeyFile), []byte(strings.Repeat("cd", hashKeyBytes)+"\n"), 0o644)
		if h, err := start(dir); err == nil {
			h.Close()
			t.Fatal("the hub started with a key file others may read")
		}
	})
}

// startTestRedis runs a real redis-server on a free port, without
// persistence, and returns its address.
func startTestRedis(t *testing.T) string {
	t.Helper()
	bin := needProgram(t, "redis-server", "redis-server")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { rdb.Close() })
	fixture.Eventually(t, 30*time.Second, "redis-server answers", func() bool {
		return rdb.Ping(context.Background()).Err() == nil
	})
	return addr
}

// TestStoredSessionOwnership: two replicas share a real Redis. Principal
// B cannot delete, touch or restore A's session on either replica (it gets
// 404, as for a session that does not exist), and A's record and session
// survive and keep working; the replicas agree on A's keyed principal id,
// so A's session is restored on the other replica; A's own DELETE works.
func TestStoredSessionOwnership(t *testing.T) {
	t.Parallel()
	addr := startTestRedis(t)
	const key = "ownership-test-hash-key-0123456789abcdef"
	const tokA, tokB = "token-of-a-1234", "token-of-b-5678"
	replica := func() string {
		cfg := gwConfig()
		cfg.SessionStore = "redis://" + addr + "/0"
		cfg.HashKey = key
		// A's token has no name: its id is its keyed hash, which both
		// replicas must compute alike.
		cfg.Auth.Tokens = []config.Token{{Value: tokA}, {Name: "b", Value: tokB}}
		_, url, _ := gwHub(t, cfg, &gwUpstream{})
		return url + "/mcp"
	}
	one, two := replica(), replica()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()

	cs, err := fixture.HTTPClient(t, one, map[string]string{"Authorization": "Bearer " + tokA})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.ID()
	recordKey := redisKeyPrefix + id
	stored, err := rdb.Get(fixture.Context(t), recordKey).Result()
	if err != nil {
		t.Fatalf("A's session record: %v", err)
	}
	plain := sha256.Sum256([]byte(tokA))
	if !strings.Contains(stored, `"principal":"token:hmac:`+hmacHex(key, tokA)+`"`) || strings.Contains(stored, hex.EncodeToString(plain[:])) {
		t.Fatalf("record %s: want A's principal as the HMAC of its token under hash_key, never its SHA-256", stored)
	}
	as := func(tok string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + tok, "Mcp-Session-Id": id, "Mcp-Protocol-Version": cs.InitializeResult().ProtocolVersion}
	}
	send := func(method, url, tok, body string) int {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range as(tok) {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`
	ttl := func() time.Duration { return rdb.PTTL(fixture.Context(t), recordKey).Val() }

	// B, on the replica that does not hold the session and on the one
	// that does: DELETE, then requests that would restore or touch it.
	for _, url := range []string{two, one} {
		for _, c := range []struct{ method, body string }{{http.MethodDelete, ""}, {http.MethodPost, list}} {
			rdb.PExpire(fixture.Context(t), recordKey, time.Minute) // below the idle timeout: a touch would show
			if status := send(c.method, url, tokB, c.body); status != http.StatusNotFound {
				t.Errorf("B's %s of A's session on %s: %d, want 404", c.method, url, status)
			}
			if n := rdb.Exists(fixture.Context(t), recordKey).Val(); n != 1 {
				t.Fatalf("B's %s on %s removed A's record", c.method, url)
			}
			if d := ttl(); d > time.Minute {
				t.Errorf("B's %s on %s touched A's record (ttl %s)", c.method, url, d)
			}
		}
	}
	// A's session still works where it is held, and on the other replica,
	// which restores it from the record.
	if res, err := gwTool(t, cs, "gw__ok", nil); err != nil || res.IsError {
		t.Fatalf("A's session after B's attempts: %v %v", err, res)
	}
	if status := send(http.MethodPost, two, tokA, list); status != http.StatusOK {
		t.Fatalf("A's session on the other replica: %d, want 200 (restored)", status)
	}
	// A's own DELETE ends it, record and all.
	if status := send(http.MethodDelete, two, tokA, ""); status/100 != 2 {
		t.Errorf("A's DELETE: %d", status)
	}
	if n := rdb.Exists(fixture.Context(t), recordKey).Val(); n != 0 {
		t.Errorf("A's DELETE left the record")
	}
}

// TestSessionStoreNeedsHashKey: replicas sharing a real Redis need
// hash_key; without it the gateway does not start (a config error naming
// the key and how to make one) and writes nothing to the store. With it,
// an unnamed token's session opened on one replica is restored on the
// other, and the store holds session records only: no key, neither under
// a name of its own (one an earlier version kept there is removed) nor in
// a record.
func TestSessionStoreNeedsHashKey(t *testing.T) {
	t.Parallel()
	addr := startTestRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	const tok = "unnamed-token-1234"
	const key = "store-test-hash-key-0123456789abcdef"
	start := func(hashKey string) (string, error) {
		cfg := gwConfig()
		cfg.SessionStore = "redis://" + addr + "/0"
		cfg.HashKey = hashKey
		cfg.Auth.Tokens = []config.Token{{Value: tok}}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		h, err := New(ctx, cfg, Options{Hub: hub.Options{Logger: slog.New(slog.DiscardHandler), StartupWait: 20 * time.Second, Builtin: (&gwUpstream{}).builtin(fixture.NewServers())}, StateDir: t.TempDir(), OpenStore: openStore})
		if err != nil {
			return "", err
		}
		srv := httptest.NewServer(h.HTTPHandler(nil))
		t.Cleanup(func() { srv.Close(); h.Close() })
		return srv.URL + "/mcp", nil
	}
	for range 2 {
		_, err := start("")
		var cfgErr *config.Error
		if !errors.As(err, &cfgErr) || !strings.Contains(err.Error(), "session_store needs hash_key") || !strings.Contains(err.Error(), "openssl rand -hex 32") {
			t.Fatalf("a replica without hash_key: %v, want a config error naming hash_key and how to make one", err)
		}
	}
	if keys := rdb.Keys(fixture.Context(t), "*").Val(); len(keys) != 0 {
		t.Fatalf("replicas that did not start wrote %v to the store", keys)
	}

	// A key an earlier version kept in the store is removed at start.
	if err := rdb.Set(fixture.Context(t), "mcp-hub:"+HashKeyFile, strings.Repeat("ab", hashKeyBytes), 0).Err(); err != nil {
		t.Fatal(err)
	}
	one, err := start(key)
	if err != nil {
		t.Fatal(err)
	}
	two, err := start(key)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := fixture.HTTPClient(t, one, map[string]string{"Authorization": "Bearer " + tok})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, two, strings.NewReader(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`))
	for k, v := range map[string]string{"Authorization": "Bearer " + tok, "Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": cs.InitializeResult().ProtocolVersion,
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream"} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the session on the other replica: %d, want 200 (restored under the same id)", resp.StatusCode)
	}
	keys := rdb.Keys(fixture.Context(t), "*").Val()
	if len(keys) == 0 {
		t.Fatal("nothing in the store: the session was not kept")
	}
	for _, k := range keys {
		v := rdb.Get(fixture.Context(t), k).Val()
		// Session records, and the pins the replicas share (never secret).
		record := strings.HasPrefix(k, redisKeyPrefix) || strings.HasPrefix(k, "mcp-hub:pins")
		if !record || strings.Contains(k, "hash_key") ||
			strings.Contains(v, key) || strings.Contains(v, hex.EncodeToString([]byte(key))) {
			t.Errorf("the store holds %s = %.200s: want session records and pins only, and never the key", k, v)
		}
	}
	if v := rdb.Get(fixture.Context(t), redisKeyPrefix+cs.ID()).Val(); !strings.Contains(v, `"principal":"token:hmac:`+hmacHex(key, tok)+`"`) {
		t.Errorf("record %s: want the token's HMAC under hash_key", v)
	}
}
