//go:build linux

// Fail closed (issue 39): what `mcp-hub serve` refuses rather than run
// weaker than configured.

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestSessionStoreWithoutHashKey: replicas on a real Redis without
// hash_key do not start: `config check` and two `serve` runs exit 2 with
// a message naming hash_key and how to make one, and nothing is written to
// Redis. A running replica (with hash_key) refuses a reload that drops it,
// says so on /healthz, and Redis never holds a key.
func TestSessionStoreWithoutHashKey(t *testing.T) {
	t.Parallel()
	redisAddr := freeAddr(t)
	startRedis(t, redisAddr)
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rdb.Close()
	without := fmt.Sprintf("servers:\n  calc: {builtin: calc}\nsession_store: redis://%s/0\n", redisAddr)
	cfg := writeConfig(t, without)
	wantMsg := func(what, out string, code int) {
		t.Helper()
		if code != exitConfig || !strings.Contains(out, "session_store needs hash_key") || !strings.Contains(out, "openssl rand -hex 32") {
			t.Errorf("%s without hash_key (exit %d):\n%s\nwant exit %d naming hash_key and how to make one", what, code, out, exitConfig)
		}
	}
	out, code := runMain(t, nil, "config", "check", "--config", cfg)
	wantMsg("config check", out, code)
	for i := range 2 {
		out, code := runMain(t, nil, "--config", cfg, "serve", "--http", freeAddr(t))
		wantMsg(fmt.Sprintf("replica %d", i+1), out, code)
	}
	if keys := rdb.Keys(fixture.Context(t), "*").Val(); len(keys) != 0 {
		t.Fatalf("replicas that did not start wrote %v to Redis", keys)
	}

	// A replica with hash_key; a reload that drops it is refused.
	with := without + "hash_key: " + testHashKey + "\n"
	if err := os.WriteFile(cfg, []byte(with), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	hubProc := startChild(t, "hub", []string{envAsMain + "=1"}, self, "--config", cfg, "serve", "--http", addr)
	d := &scaleOut{hubs: [2]*child{hubProc}, hubBases: [2]string{"http://" + addr}}
	d.waitHealth(t, 0, "ok")
	connectThrough(t, "http://"+addr+"/mcp")
	if err := os.WriteFile(cfg, []byte(without), 0o644); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 30*time.Second, "/healthz shows the refused reload", func() bool {
		h, err := loadGetHealth("http://" + addr)
		return err == nil && strings.Contains(h.Config.LastReloadError, "session_store needs hash_key")
	})
	if h, _ := loadGetHealth("http://" + addr); h.Config.Reloads != 0 || h.Status != "ok" {
		t.Errorf("/healthz after the refused reload: %+v, want the running config kept", h.Config)
	}
	keys := rdb.Keys(fixture.Context(t), "*").Val()
	if len(keys) == 0 {
		t.Error("no session record in Redis")
	}
	for _, k := range keys {
		record := strings.HasPrefix(k, "mcp-hub:session:") || strings.HasPrefix(k, "mcp-hub:pins") // the pins the replicas share
		if v := rdb.Get(fixture.Context(t), k).Val(); !record || strings.Contains(v, testHashKey) {
			t.Errorf("Redis holds %s = %.200s: want session records and pins only, never the key", k, v)
		}
	}
}

// TestReloadWeakeningAuthRefused: on a loopback listener, a reload that
// drops auth, or keeps fewer tokens, is refused: the log and /healthz say
// why and /metrics still needs the token. `auth: none` in the file, or
// serve --allow-auth-change, lets it apply.
func TestReloadWeakeningAuthRefused(t *testing.T) {
	t.Parallel()
	const servers = "servers:\n  calc: {builtin: calc}\n"
	const twoTokens = servers + "auth:\n  tokens:\n    - {name: ops, token: ops-token-123456}\n    - {name: ci, token: ci-token-123456}\n"
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	start := func(t *testing.T, args ...string) (cfg, base string, hubProc *child) {
		cfg = writeConfig(t, twoTokens)
		addr := freeAddr(t)
		hubProc = startChild(t, "hub", []string{envAsMain + "=1"}, self, append([]string{"--config", cfg, "serve", "--http", addr}, args...)...)
		base = "http://" + addr
		fixture.Eventually(t, 60*time.Second, "the hub answers", func() bool {
			if hubProc.exited() {
				t.Fatalf("hub exited: %v\n%s", hubProc.waitErr, hubProc.logTail(40))
			}
			return metricsStatus(base, "") == http.StatusUnauthorized
		})
		return cfg, base, hubProc
	}
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		cfg, base, hubProc := start(t)
		for _, c := range []struct{ name, yaml, why string }{
			{"no auth section", servers, "auth is removed"},
			{"fewer tokens", servers + "auth:\n  tokens: [{name: ops, token: ops-token-123456}]\n", "auth.tokens: 1 tokens where there were 2"},
		} {
			replace(t, cfg, c.yaml)
			var st hub.ConfigStatus
			fixture.Eventually(t, 30*time.Second, c.name+": /healthz shows the refused reload", func() bool {
				st = healthConfig(t, base, "ops-token-123456")
				return strings.Contains(st.LastReloadError, c.why)
			})
			if !strings.Contains(st.LastReloadError, "weaken authentication") || st.Reloads != 0 {
				t.Errorf("%s: /healthz config %+v, want the reason and no reload applied", c.name, st)
			}
			if !strings.Contains(hubProc.logTail(200), c.why) {
				t.Errorf("%s: the log does not say why:\n%s", c.name, hubProc.logTail(20))
			}
			if st := metricsStatus(base, ""); st != http.StatusUnauthorized {
				t.Errorf("%s: /metrics without a token: %d, want 401", c.name, st)
			}
			if st := metricsStatus(base, "ci-token-123456"); st != http.StatusOK {
				t.Errorf("%s: /metrics with a token of the running config: %d, want 200", c.name, st)
			}
		}
		// Said on purpose in the file: applied.
		replace(t, cfg, servers+"auth: none\n")
		fixture.Eventually(t, 30*time.Second, "auth: none applies", func() bool {
			return metricsStatus(base, "") == http.StatusOK
		})
	})

	t.Run("allowed by flag", func(t *testing.T) {
		t.Parallel()
		cfg, base, hubProc := start(t, "--allow-auth-change")
		replace(t, cfg, servers)
		fixture.Eventually(t, 30*time.Second, "the reload without auth applies", func() bool {
			return metricsStatus(base, "") == http.StatusOK
		})
		if !strings.Contains(hubProc.logTail(200), "weakens authentication (--allow-auth-change): auth is removed") {
			t.Errorf("no warning in the log:\n%s", hubProc.logTail(20))
		}
	})
}

// metricsStatus is the status of GET base/metrics, with token as bearer
// when it is not empty; 0 when the hub does not answer.
func metricsStatus(base, token string) int {
	req, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}
