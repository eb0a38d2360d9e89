//go:build linux

// Scale-out (issue 15): two real `mcp-hub serve --http` replicas sharing a
// real redis-server, behind a real haproxy with deploy/haproxy.cfg.

package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// envRequireReal makes a missing Debian program (redis-server, haproxy,
// nginx, promtool, chromium) a failure rather than a skip:
// ./scripts/test.sh installs them and sets it. So does CI=true.
const envRequireReal = "MCP_HUB_REQUIRE_REAL"

// realBinary finds a program from a Debian package (in PATH or the sbin
// folders, where haproxy lives).
func realBinary(t *testing.T, name, pkg string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin"} {
		if p := filepath.Join(dir, name); fileExecutable(p) {
			return p
		}
	}
	msg := fmt.Sprintf("%s not installed (Debian package %s; ./scripts/test.sh installs it)", name, pkg)
	if os.Getenv(envRequireReal) != "" || strings.EqualFold(os.Getenv("CI"), "true") {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func fileExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// startRedis runs redis-server on addr, without persistence, and waits for
// it to say it is ready.
func startRedis(t *testing.T, addr string) *child {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	c := startChild(t, "redis", nil, realBinary(t, "redis-server", "redis-server"),
		"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	fixture.Eventually(t, 30*time.Second, "redis-server ready", func() bool {
		if c.exited() {
			t.Fatalf("redis-server exited: %v\n%s", c.waitErr, c.logTail(20))
		}
		return strings.Contains(c.logTail(50), "Ready to accept connections")
	})
	return c
}

// kill ends a child at once, as a crash would, and waits for it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
}

// scaleOut is the deployment under test.
type scaleOut struct {
	redisAddr  string
	redis      *child
	hubs       [2]*child
	hubBases   [2]string
	roundRobin string // haproxy, round-robin: http://ADDR/mcp
	sticky     string // haproxy, hashed on Mcp-Session-Id
}

// scaleOutConfig is the replicas' config: calc and text are deferred.
const scaleOutConfig = discoveryConfig + "session_store: redis://%s/0\nhash_key: " + testHashKey + "\n"

// testHashKey is the hash_key of the tests' replicas (session_store needs one).
const testHashKey = "scale-out-test-hash-key-0123456789abcdef"

func startScaleOut(t *testing.T) *scaleOut {
	t.Helper()
	return startReplicas(t, func(redisAddr string) string { return fmt.Sprintf(scaleOutConfig, redisAddr) })
}

// startReplicas starts two replicas with the config config returns, and
// haproxy in front of them; given a redis address config may use, a
// redis-server runs there.
func startReplicas(t *testing.T, config func(redisAddr string) string) *scaleOut {
	t.Helper()
	haproxy := realBinary(t, "haproxy", "haproxy")
	d := &scaleOut{redisAddr: freeAddr(t)}
	yaml := config(d.redisAddr)
	if strings.Contains(yaml, d.redisAddr) {
		d.redis = startRedis(t, d.redisAddr)
	}
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, yaml)
	for i := range d.hubs {
		addr := freeAddr(t)
		d.hubs[i] = startChild(t, fmt.Sprintf("hub%d", i+1), []string{envAsMain + "=1"}, self, "--config", cfg, "serve", "--http", addr)
		d.hubBases[i] = "http://" + addr
	}
	for i := range d.hubs {
		d.waitHealth(t, i, "ok")
	}
	rr, sticky := freeAddr(t), freeAddr(t)
	env := []string{"RR_BIND=" + rr, "STICKY_BIND=" + sticky,
		"HUB1=" + strings.TrimPrefix(d.hubBases[0], "http://"), "HUB2=" + strings.TrimPrefix(d.hubBases[1], "http://")}
	hp := startChild(t, "haproxy", env, haproxy, "-f", filepath.Join("..", "deploy", "haproxy.cfg"), "-db")
	d.roundRobin, d.sticky = "http://"+rr+"/mcp", "http://"+sticky+"/mcp"
	fixture.Eventually(t, 30*time.Second, "haproxy forwarding to the hubs", func() bool {
		if hp.exited() {
			t.Fatalf("haproxy exited: %v\n%s", hp.waitErr, hp.logTail(30))
		}
		h, err := loadGetHealth("http://" + rr)
		return err == nil && h.Status == "ok"
	})
	return d
}

// waitHealth waits until replica i's /healthz says status.
func (d *scaleOut) waitHealth(t *testing.T, i int, status string) {
	t.Helper()
	fixture.Eventually(t, 60*time.Second, fmt.Sprintf("hub%d /healthz %s", i+1, status), func() bool {
		if d.hubs[i].exited() {
			t.Fatalf("hub%d exited: %v\n%s", i+1, d.hubs[i].waitErr, d.hubs[i].logTail(40))
		}
		h, err := loadGetHealth(d.hubBases[i])
		return err == nil && h.Status == status
	})
}

// httpSessions is how many HTTP sessions replica i holds.
func (d *scaleOut) httpSessions(t *testing.T, i int) int {
	t.Helper()
	h, err := loadGetHealth(d.hubBases[i])
	if err != nil {
		t.Fatalf("hub%d /healthz: %v", i+1, err)
	}
	return h.HTTPSessions
}

// calledCalc says whether replica i has called its calc server.
func (d *scaleOut) calledCalc(t *testing.T, i int) bool {
	t.Helper()
	h, err := loadGetHealth(d.hubBases[i])
	if err != nil {
		t.Fatalf("hub%d /healthz: %v", i+1, err)
	}
	for _, s := range h.Servers {
		if s.Name == "calc" {
			return s.LatencyMillis > 0
		}
	}
	return false
}

func connectThrough(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "scaleout-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, fixture.Legacy())
	if err != nil {
		t.Fatalf("connect through %s: %v", url, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// evaluate calls calc__evaluate n times and checks every answer.
func evaluate(t *testing.T, cs *mcp.ClientSession, n int) {
	t.Helper()
	for i := range n {
		if got, want := callText(t, cs, "calc__evaluate", map[string]any{"expression": fmt.Sprintf("%d*3", i)}), fmt.Sprint(i*3); !strings.Contains(got, want) {
			t.Fatalf("calc__evaluate %d*3 = %q, want %s", i, got, want)
		}
	}
}

// TestScaleOutRoundRobinSurvivesAReplica is issue 15's acceptance 1: a
// session loads a deferred tool and calls it through plain round-robin,
// its requests alternating between the replicas; one replica is killed and
// the session goes on with no error.
func TestScaleOutRoundRobinSurvivesAReplica(t *testing.T) {
	d := startScaleOut(t)
	cs := connectThrough(t, d.roundRobin)
	if out := callText(t, cs, "search_tools", map[string]any{"tool_names": []string{"calc__evaluate"}}); !strings.Contains(out, "calc__evaluate") {
		t.Fatalf("search_tools did not load calc__evaluate:\n%s", out)
	}
	evaluate(t, cs, 10)
	// Both replicas served the session: one made it, the other restored it.
	for i := range d.hubs {
		if n := d.httpSessions(t, i); n != 1 {
			t.Fatalf("hub%d holds %d HTTP sessions, want 1: round-robin should have sent the session's requests to both", i+1, n)
		}
	}
	d.hubs[0].kill(t)
	evaluate(t, cs, 10)
	if got := callText(t, cs, "call_tool", map[string]any{"name": "calc__evaluate", "arguments": `{"expression":"2^10"}`}); !strings.Contains(got, "1024") {
		t.Fatalf("call_tool calc__evaluate 2^10 = %q", got)
	}
	// The client's DELETE removes the session from the store.
	rdb := redis.NewClient(&redis.Options{Addr: d.redisAddr})
	defer rdb.Close()
	key := "mcp-hub:session:" + cs.ID()
	if n, err := rdb.Exists(context.Background(), key, key+":loaded").Result(); err != nil || n != 2 {
		t.Fatalf("stored session before DELETE: %d keys (%v), want 2", n, err)
	}
	if err := cs.Close(); err != nil {
		t.Fatalf("closing the session (DELETE): %v", err)
	}
	if n, err := rdb.Exists(context.Background(), key, key+":loaded").Result(); err != nil || n != 0 {
		t.Fatalf("stored session after DELETE: %d keys (%v), want none", n, err)
	}
}

// TestScaleOutRedisOutage is issue 15's acceptance 2: Redis killed in the
// middle of a run, calls go on and /healthz says degraded; Redis back, the
// sessions are written back, including what was loaded meanwhile.
func TestScaleOutRedisOutage(t *testing.T) {
	d := startScaleOut(t)
	cs := connectThrough(t, d.roundRobin)
	callText(t, cs, "search_tools", map[string]any{"tool_names": []string{"calc__evaluate"}})
	evaluate(t, cs, 6)
	for i := range d.hubs {
		if n := d.httpSessions(t, i); n != 1 {
			t.Fatalf("hub%d holds %d HTTP sessions, want 1", i+1, n)
		}
	}

	d.redis.kill(t)
	evaluate(t, cs, 6)
	for i := range d.hubs {
		d.waitHealth(t, i, "degraded")
	}
	evaluate(t, cs, 6)
	// Loaded while the store is down: kept by the replica that served it.
	callText(t, cs, "search_tools", map[string]any{"tool_names": []string{"text__slugify"}})

	d.redis = startRedis(t, d.redisAddr) // a new, empty Redis
	for i := range d.hubs {
		d.waitHealth(t, i, "ok")
	}
	rdb := redis.NewClient(&redis.Options{Addr: d.redisAddr})
	defer rdb.Close()
	ctx := context.Background()
	loadedKey := "mcp-hub:session:" + cs.ID() + ":loaded"
	fixture.Eventually(t, 30*time.Second, "the session written back to Redis with both its tools", func() bool {
		loaded, err := rdb.SMembers(ctx, loadedKey).Result()
		slices.Sort(loaded)
		return err == nil && slices.Equal(loaded, []string{"calc__evaluate", "text__slugify"})
	})
	if n, err := rdb.Exists(ctx, "mcp-hub:session:"+cs.ID()).Result(); err != nil || n != 1 {
		t.Fatalf("session record after write-back: exists=%d err=%v", n, err)
	}
	if ttl, err := rdb.PTTL(ctx, "mcp-hub:session:"+cs.ID()).Result(); err != nil || ttl <= 0 {
		t.Fatalf("session record TTL %v (%v): want the idle timeout", ttl, err)
	}
	// Both replicas now serve the tool loaded during the outage.
	for i := range 4 {
		if got := callText(t, cs, "text__slugify", map[string]any{"text": fmt.Sprintf("Hello World %d", i)}); !strings.Contains(got, fmt.Sprintf("hello-world-%d", i)) {
			t.Fatalf("text__slugify = %q", got)
		}
	}
	evaluate(t, cs, 4)
	for i := range d.hubs {
		if d.hubs[i].exited() {
			t.Fatalf("hub%d exited during the Redis outage: %v\n%s", i+1, d.hubs[i].waitErr, d.hubs[i].logTail(40))
		}
		if !strings.Contains(d.hubs[i].logTail(400), "session store unreachable") {
			t.Errorf("hub%d did not warn that the session store was unreachable", i+1)
		}
	}
}

// startNginx runs deploy/nginx.conf in front of the replicas and returns
// its /mcp URL.
func (d *scaleOut) startNginx(t *testing.T) string {
	t.Helper()
	bin := realBinary(t, "nginx", "nginx")
	tmpl, err := os.ReadFile(filepath.Join("..", "deploy", "nginx.conf"))
	if err != nil {
		t.Fatal(err)
	}
	listen := freeAddr(t)
	conf := strings.NewReplacer("LISTEN", listen,
		"HUB1", strings.TrimPrefix(d.hubBases[0], "http://"), "HUB2", strings.TrimPrefix(d.hubBases[1], "http://")).Replace(string(tmpl))
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "nginx", nil, bin, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	fixture.Eventually(t, 30*time.Second, "nginx forwarding to the hubs", func() bool {
		if c.exited() {
			t.Fatalf("nginx exited: %v\n%s", c.waitErr, c.logTail(30))
		}
		h, err := loadGetHealth("http://" + listen)
		return err == nil && h.Status == "ok"
	})
	return "http://" + listen + "/mcp"
}

// TestScaleOutSessionAffinity runs the affinity snippets of docs/deployment.md (HAProxy
// and nginx, hashed on Mcp-Session-Id): every request of a session,
// its GET stream included, goes to one replica; when that replica dies the
// session moves to the other, which restores it, with its loaded tool.
func TestScaleOutSessionAffinity(t *testing.T) {
	for _, lb := range []string{"haproxy", "nginx"} {
		t.Run(lb, func(t *testing.T) {
			d := startScaleOut(t)
			url := d.sticky
			if lb == "nginx" {
				url = d.startNginx(t)
			}
			cs := connectThrough(t, url)
			callText(t, cs, "search_tools", map[string]any{"tool_names": []string{"calc__evaluate"}})
			evaluate(t, cs, 10)
			// The initialize carries no session id, so the balancer sends
			// it anywhere; from then on the hash picks one replica, which
			// restores the session if it was not the one that made it.
			// Every call must have gone to that one.
			holder := -1
			for i := range d.hubs {
				if !d.calledCalc(t, i) {
					continue
				}
				if holder >= 0 {
					t.Fatalf("hub1 and hub2 both served calc__evaluate: with affinity one replica serves the session")
				}
				holder = i
			}
			if holder < 0 {
				t.Fatal("no replica served calc__evaluate")
			}
			d.hubs[holder].kill(t)
			evaluate(t, cs, 10)
			if n := d.httpSessions(t, 1-holder); n != 1 {
				t.Fatalf("hub%d holds %d HTTP sessions after hub%d died, want the restored one", 2-holder, n, holder+1)
			}
		})
	}
}
