//go:build linux

// Fail closed (issue 39): what `mcp-hub serve` refuses rather than run
// weaker than configured.

package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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
	self, err := os.Executable()
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
		if v := rdb.Get(fixture.Context(t), k).Val(); !strings.HasPrefix(k, "mcp-hub:session:") || strings.Contains(v, testHashKey) {
			t.Errorf("Redis holds %s = %.200s: want session records only, never the key", k, v)
		}
	}
}
