//go:build unix

package upstream

// Fault tests: real upstream processes (testdata/fixture) that crash, are
// killed, exit, hang, write garbage or go away over HTTP, and the
// Upstream's answer to each (restart with backoff, circuit breaker, fast
// clear errors, cancellation on timeout, redaction, environment hygiene).
// Helpers are prefixed "ft" so they never clash with other test files.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// ftListener counts re-lists and drops everything else.
type ftListener struct{ changed atomic.Int64 }

func (l *ftListener) UpstreamChanged(*Upstream)                                       { l.changed.Add(1) }
func (l *ftListener) UpstreamNotified(context.Context, *Upstream, string, mcp.Params) {}
func (l *ftListener) UpstreamRequest(context.Context, *Upstream, string, mcp.Params) (mcp.Result, error) {
	return nil, errors.New("not supported in this test")
}

// ftOpts are fast reconnection settings for tests.
func ftOpts(t testing.TB) (Options, *fixture.Log) {
	lg := fixture.NewLog(t)
	return Options{
		InitialBackoff: 50 * time.Millisecond,
		MaxBackoff:     200 * time.Millisecond,
		UnhealthyAfter: 5,
		Cooldown:       time.Second,
		Logger:         slog.New(slog.NewTextHandler(lg, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}, lg
}

// ftStart starts an upstream and closes it when the test ends.
func ftStart(t testing.TB, cfg config.Upstream, opts Options) (*Upstream, *ftListener) {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "fx"
	}
	l := &ftListener{}
	u := New(cfg, l, opts)
	u.Start(context.Background())
	t.Cleanup(func() { u.Close() })
	return u, l
}

func ftCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// ftWait polls cond every 10ms for up to 30s.
func ftWait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	fixture.Eventually(t, 30*time.Second, what, cond)
}

func ftReady(t testing.TB, u *Upstream) {
	t.Helper()
	ftWait(t, "server ready", func() bool { return u.Status().State == StateReady })
}

func ftCall(t testing.TB, u *Upstream, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return fixture.Result(t, res)
}

func ftPID(t testing.TB, u *Upstream) int {
	t.Helper()
	pid, err := strconv.Atoi(fixture.ResultText(ftCall(t, u, "pid", nil)))
	if err != nil || pid <= 0 {
		t.Fatalf("pid tool: %v", err)
	}
	return pid
}

func ftAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// TestFaultStdioExitRestarts: a stdio server that exits (crash, kill -9,
// exit 0) is restarted with backoff, re-initialized and re-listed.
func TestFaultStdioExitRestarts(t *testing.T) {
	cases := []struct {
		name string
		args []string
		end  func(t *testing.T, u *Upstream, pid int)
	}{
		{"crash", []string{"-crash-after", "2"}, func(t *testing.T, u *Upstream, pid int) {
			ftCall(t, u, "fail", nil) // the second call; the fixture exits 2 after answering
		}},
		{"kill9", nil, func(t *testing.T, u *Upstream, pid int) {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}},
		{"exit0", nil, func(t *testing.T, u *Upstream, pid int) {
			// The fixture returns from main on SIGTERM: a clean exit 0.
			if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts, _ := ftOpts(t)
			u, l := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: append([]string{"-name", "fx", "-features"}, tc.args...)}, opts)
			ftReady(t, u)
			pid := ftPID(t, u)
			listed := l.changed.Load()
			tc.end(t, u, pid)
			ftWait(t, "restart counted", func() bool { return u.Status().Restarts == 1 })
			ftWait(t, "old process gone", func() bool { return !ftAlive(pid) })
			ftReady(t, u)
			st := u.Status()
			if st.Tools == 0 || !strings.Contains(st.Transport, "stdio") {
				t.Errorf("status after restart = %+v", st)
			}
			// The lists are stored a moment before they are handed on.
			ftWait(t, "a re-list after the restart", func() bool { return l.changed.Load() > listed })
			if pid2 := ftPID(t, u); pid2 == pid {
				t.Errorf("same pid %d after restart", pid)
			}
		})
	}
}

// TestFaultBackoffJitter: exponential, capped, jittered within ±20%, and
// the cool-down once the breaker is open.
func TestFaultBackoffJitter(t *testing.T) {
	u := New(config.Upstream{Name: "b", Command: "x"}, &ftListener{}, Options{
		InitialBackoff: 100 * time.Millisecond, MaxBackoff: time.Second, UnhealthyAfter: 8, Cooldown: 5 * time.Second,
	})
	for _, c := range []struct {
		failures int
		want     time.Duration
	}{{0, 100 * time.Millisecond}, {1, 100 * time.Millisecond}, {2, 200 * time.Millisecond}, {3, 400 * time.Millisecond},
		{4, 800 * time.Millisecond}, {5, time.Second}, {7, time.Second}, {8, 5 * time.Second}, {20, 5 * time.Second}} {
		u.failures = c.failures
		seen := map[time.Duration]bool{}
		for range 50 {
			d := u.backoff()
			if d < c.want*8/10 || d > c.want*12/10 {
				t.Fatalf("failures=%d: backoff %v outside %v ±20%%", c.failures, d, c.want)
			}
			seen[d] = true
		}
		if len(seen) < 10 {
			t.Errorf("failures=%d: only %d distinct delays in 50: no jitter?", c.failures, len(seen))
		}
	}
}

// TestFaultInFlightCallOnCrash: a call in flight when the server dies gets
// an error that names the server and says it restarted; the server comes back.
func TestFaultInFlightCallOnCrash(t *testing.T) {
	opts, lg := ftOpts(t)
	u, _ := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: []string{"-name", "fx", "-features"}}, opts)
	ftReady(t, u)
	pid := ftPID(t, u)
	errc := make(chan error, 1)
	go func() {
		_, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 20000}})
		errc <- err
	}()
	lg.WaitFor(t, "the call to reach the fixture", 30*time.Second, func(s string) bool { return strings.Contains(s, "sleeping 20000 ms") })
	start := time.Now()
	syscall.Kill(pid, syscall.SIGKILL)
	var err error
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("call in flight did not return after the server was killed")
	}
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.Server != "fx" {
		t.Fatalf("call in flight: err = %v (%T), want *UnavailableError for fx", err, err)
	}
	if msg := err.Error(); !strings.Contains(msg, "'fx'") || !strings.Contains(msg, "restarted") {
		t.Errorf("error %q should name the server and say it restarted", msg)
	}
	t.Logf("in-flight call failed after %v: %v", time.Since(start), err)
	ftWait(t, "restart counted", func() bool { return u.Status().Restarts == 1 })
	ftReady(t, u)
	if got := fixture.ResultText(ftCall(t, u, "sleep", map[string]any{"ms": 1})); got != "slept" {
		t.Errorf("after restart: sleep = %q", got)
	}
}

// ftFlagScript runs the fixture only while flag exists, and exits 1 at
// once otherwise; every start appends a line to starts.
func ftFlagScript(t *testing.T, flag, starts string, fixtureArgs ...string) config.Upstream {
	script := fmt.Sprintf(`echo start >> %q; if [ -e %q ]; then exec %q "$@"; fi; echo "not today" >&2; exit 1`, starts, flag, fixture.Build(t))
	return config.Upstream{Command: "/bin/sh", Args: append([]string{"-c", script, "sh"}, fixtureArgs...)}
}

func ftLines(path string) int {
	b, _ := os.ReadFile(path)
	return bytes.Count(b, []byte("\n"))
}

// TestFaultCircuitBreaker: after UnhealthyAfter consecutive failures the
// server is unhealthy, calls fail fast and nothing is started during the
// cool-down; then one probe, and a healthy probe closes the breaker.
func TestFaultCircuitBreaker(t *testing.T) {
	dir := t.TempDir()
	flag, starts := filepath.Join(dir, "up"), filepath.Join(dir, "starts")
	opts, _ := ftOpts(t)
	opts.InitialBackoff = 20 * time.Millisecond
	opts.UnhealthyAfter = 3
	opts.Cooldown = 1500 * time.Millisecond
	u, _ := ftStart(t, ftFlagScript(t, flag, starts, "-name", "fx", "-features"), opts)
	ftWait(t, "unhealthy", func() bool { return u.Status().State == StateUnhealthy })
	if n := ftLines(starts); n != 3 {
		t.Errorf("%d starts before the breaker opened, want 3", n)
	}
	// Calls fail fast, with an error that says why and when the next probe is.
	begin := time.Now()
	_, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "pid"})
	if took := time.Since(begin); took > time.Second {
		t.Errorf("call to an unhealthy server took %v, want fail-fast", took)
	}
	var ue *UnavailableError
	if !errors.As(err, &ue) || ue.State != StateUnhealthy {
		t.Fatalf("err = %v, want unhealthy UnavailableError", err)
	}
	for _, want := range []string{"'fx' is unhealthy after 3 consecutive failures", "last stderr line: not today", "probes it again in"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	// Nothing is started during the cool-down.
	time.Sleep(500 * time.Millisecond)
	if n := ftLines(starts); n != 3 {
		t.Errorf("%d starts during the cool-down, want 3 (no retries while the breaker is open)", n)
	}
	// The server is fixed; the probe after the cool-down finds it.
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ftReady(t, u)
	if n := ftLines(starts); n != 4 {
		t.Errorf("%d starts, want 4 (exactly one probe)", n)
	}
	if took := time.Since(begin); took < 700*time.Millisecond {
		t.Errorf("probe after %v, before the cool-down ended", took)
	}
	ftPID(t, u)
}

// TestFaultCircuitBreakerFailedProbe: a probe that fails starts another
// cool-down; the server stays unhealthy.
func TestFaultCircuitBreakerFailedProbe(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	opts, _ := ftOpts(t)
	opts.InitialBackoff = 20 * time.Millisecond
	opts.UnhealthyAfter = 2
	opts.Cooldown = 400 * time.Millisecond
	u, _ := ftStart(t, ftFlagScript(t, filepath.Join(dir, "never"), starts), opts)
	ftWait(t, "unhealthy", func() bool { return u.Status().State == StateUnhealthy })
	ftWait(t, "a probe", func() bool { return ftLines(starts) >= 3 })
	if st := u.Status(); st.State != StateUnhealthy || st.LastError == "" {
		t.Errorf("after a failed probe: %+v", st)
	}
	// One probe per cool-down, not a burst.
	n := ftLines(starts)
	time.Sleep(250 * time.Millisecond)
	if m := ftLines(starts); m > n+1 {
		t.Errorf("%d starts in 250ms with a 400ms cool-down", m-n)
	}
}

// TestFaultCrashLoopAfterConnect: a server that connects and then dies at
// once, again and again, is a crash loop too: it ends up unhealthy
// (a successful connect alone does not reset the count).
func TestFaultCrashLoopAfterConnect(t *testing.T) {
	opts, _ := ftOpts(t)
	opts.InitialBackoff = 20 * time.Millisecond
	opts.UnhealthyAfter = 3
	opts.Cooldown = time.Minute
	opts.StableAfter = 10 * time.Second
	// The fixture exits 200 ms after answering tools/list: always after
	// the connect, however slow the machine.
	u, _ := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: []string{"-name", "fx", "-tools", "a", "-exit-after-list"}}, opts)
	ftWait(t, "unhealthy", func() bool { return u.Status().State == StateUnhealthy })
	st := u.Status()
	if st.Restarts < 3 || !strings.Contains(st.LastError, "connection ended") {
		t.Errorf("crash-looping server: %+v, want >= 3 restarts and last error 'connection ended'", st)
	}
}

// TestFaultCallTimeout: the per-call timeout cancels the upstream call with
// MCP cancellation (the fixture's sleep sees its context cancelled) and the
// server stays usable; a hung call does not block other calls.
func TestFaultCallTimeout(t *testing.T) {
	opts, lg := ftOpts(t)
	u, _ := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: []string{"-name", "fx", "-features"}, Timeout: config.Duration(4 * time.Second)}, opts)
	ftReady(t, u)
	errc := make(chan error, 1)
	begin := time.Now()
	go func() {
		_, err := u.CallTool(context.Background(), nil, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60000}})
		errc <- err
	}()
	// Other calls to the same server go through while that one hangs.
	lg.WaitFor(t, "the hung call to reach the fixture", 30*time.Second, func(s string) bool { return strings.Contains(s, "sleeping 60000 ms") })
	for range 3 {
		s := time.Now()
		if got := fixture.ResultText(ftCall(t, u, "sleep", map[string]any{"ms": 1})); got != "slept" {
			t.Errorf("sleep = %q", got)
		}
		// Well under the hung call's timeout, with room for a loaded machine.
		if d := time.Since(s); d > 2500*time.Millisecond {
			t.Errorf("a call beside a hung one took %v", d)
		}
	}
	err := <-errc
	took := time.Since(begin)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "'fx'") || !strings.Contains(err.Error(), "timed out after 4s") {
		t.Fatalf("hung call: err = %v", err)
	}
	if took < 3900*time.Millisecond || took > 20*time.Second {
		t.Errorf("hung call returned after %v, want about 4s", took)
	}
	ftWait(t, "the fixture to see the cancellation", func() bool { return strings.Contains(lg.String(), "sleep cancelled: context canceled") })
	if st := u.Status(); st.State != StateReady || st.Restarts != 0 || st.LastLatency < 3900*time.Millisecond {
		t.Errorf("after a timeout: %+v (want ready, no restart, last latency ~4s)", st)
	}
}

// TestFaultGarbageStdout: a line on stdout that is not JSON-RPC (a banner,
// a stray print) is logged and skipped; the server is served normally.
func TestFaultGarbageStdout(t *testing.T) {
	opts, lg := ftOpts(t)
	u, _ := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: []string{"-name", "fx", "-tools", "a", "-garbage"}}, opts)
	ftWait(t, "ready", func() bool { return u.Status().State == StateReady })
	if !strings.Contains(lg.String(), "non-JSON-RPC line on stdout") || !strings.Contains(lg.String(), "fixture garbage line") {
		t.Errorf("the garbage line was not reported:\n%s", lg.String())
	}
	res, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "a", Arguments: map[string]any{"x": 1}})
	if err != nil || fixture.Result(t, res).IsError {
		t.Fatalf("call after garbage: %v %+v", err, res)
	}
	if st := u.Status(); st.Tools != 1 || st.Restarts != 0 {
		t.Errorf("status = %+v, want 1 tool and no restart", st)
	}
}

// TestFaultHugeMessage: a server whose tools/list is larger than
// max_result_bytes (8 MiB) is reported, not read into memory without bound.
func TestFaultHugeMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 17 MiB")
	}
	dir := t.TempDir()
	schema := `{"big":{"type":"object","description":"` + strings.Repeat("x", 17<<20) + `"}}`
	path := filepath.Join(dir, "schemas.json")
	if err := os.WriteFile(path, []byte(schema), 0o644); err != nil {
		t.Fatal(err)
	}
	opts, _ := ftOpts(t)
	opts.UnhealthyAfter = 1
	opts.Cooldown = time.Minute
	u, _ := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: []string{"-name", "fx", "-tools", "big", "-schema-file", path}}, opts)
	ftWait(t, "unhealthy", func() bool { return u.Status().State == StateUnhealthy })
	if st := u.Status(); !strings.Contains(st.LastError, "larger than max_result_bytes (8388608 bytes)") {
		t.Errorf("last error = %q, want the limit named", st.LastError)
	}
}

// ftHTTPFixture runs the fixture over HTTP on a fixed address, so that it
// can be stopped and started again at the same URL.
type ftHTTPFixture struct {
	t    *testing.T
	addr string
	cmd  *exec.Cmd
}

func ftStartHTTP(t *testing.T, addr string) *ftHTTPFixture {
	f := &ftHTTPFixture{t: t, addr: addr}
	f.start()
	t.Cleanup(f.stop)
	return f
}

func (f *ftHTTPFixture) url() string { return "http://" + f.addr + "/mcp" }

func (f *ftHTTPFixture) start() {
	f.t.Helper()
	f.cmd = fixture.Command(f.t, "-name", "web", "-features", "-http", f.addr)
	if err := f.cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	ftWait(f.t, "fixture listening", func() bool {
		c, err := net.Dial("tcp", f.addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

func (f *ftHTTPFixture) stop() {
	if f.cmd != nil && f.cmd.Process != nil {
		f.cmd.Process.Kill()
		f.cmd.Wait()
		f.cmd = nil
	}
}

func ftFreeAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestFaultHTTPGoesAway: an HTTP upstream that dies is re-initialized when
// it comes back; while it is down, calls fail fast with a clear error.
func TestFaultHTTPGoesAway(t *testing.T) {
	f := ftStartHTTP(t, ftFreeAddr(t))
	opts, _ := ftOpts(t)
	u, l := ftStart(t, config.Upstream{Name: "web", URL: f.url()}, opts)
	ftReady(t, u)
	ftCall(t, u, "pid", nil)
	f.stop()
	ftWait(t, "restarting", func() bool { return u.Status().State == StateRestarting })
	begin := time.Now()
	_, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "pid"})
	if took := time.Since(begin); took > time.Second {
		t.Errorf("call while down took %v", took)
	}
	var ue *UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "server 'web' is restarting") || !strings.Contains(err.Error(), "retry") {
		t.Fatalf("call while down: %v", err)
	}
	ftWait(t, "connection refused reported", func() bool { return strings.Contains(u.Status().LastError, "connection refused") })
	listed := l.changed.Load()
	f.start()
	ftReady(t, u)
	if st := u.Status(); st.Restarts != 1 {
		t.Errorf("restarts = %d, want 1", st.Restarts)
	}
	ftWait(t, "a re-list after coming back", func() bool { return l.changed.Load() > listed })
	ftCall(t, u, "pid", nil)
}

// ftProxy sits between the upstream and the fixture and can misbehave:
// answer 503, or 404 for the current session once.
type ftProxy struct {
	mode atomic.Value // "pass", "503", "404once"
	srv  *httptest.Server
}

func ftStartProxy(t *testing.T, target string) *ftProxy {
	u, _ := url.Parse(target)
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	p := &ftProxy{}
	p.mode.Store("pass")
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch p.mode.Load().(string) {
		case "503":
			io.Copy(io.Discard, r.Body)
			http.Error(w, "upstream overloaded", http.StatusServiceUnavailable)
			return
		case "404once":
			if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") != "" {
				p.mode.Store("pass")
				io.Copy(io.Discard, r.Body)
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// TestFaultHTTP5xx: an upstream answering 5xx fails the call with a clear,
// retryable error and is re-initialized once it answers again.
func TestFaultHTTP5xx(t *testing.T) {
	f := ftStartHTTP(t, ftFreeAddr(t))
	p := ftStartProxy(t, f.url())
	opts, _ := ftOpts(t)
	u, _ := ftStart(t, config.Upstream{Name: "web", URL: p.srv.URL + "/mcp"}, opts)
	ftReady(t, u)
	before := ftPID(t, u)
	p.mode.Store("503")
	_, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "pid"})
	var ue *UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "'web'") || !strings.Contains(err.Error(), "Service Unavailable") {
		t.Fatalf("call during 503: %v", err)
	}
	ftWait(t, "not ready", func() bool { return u.Status().State != StateReady })
	// Down: fast, clear errors.
	begin := time.Now()
	if _, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "pid"}); err == nil || time.Since(begin) > time.Second {
		t.Errorf("call while re-initializing: %v after %v", err, time.Since(begin))
	}
	p.mode.Store("pass")
	ftReady(t, u)
	if st := u.Status(); st.Restarts != 1 {
		t.Errorf("restarts = %d, want 1", st.Restarts)
	}
	if pid := ftPID(t, u); pid != before {
		t.Errorf("the same server process should answer (%d vs %d)", pid, before)
	}
}

// TestFaultHTTP404Session: an upstream that no longer knows the session
// (404) is re-initialized with a new session.
func TestFaultHTTP404Session(t *testing.T) {
	f := ftStartHTTP(t, ftFreeAddr(t))
	p := ftStartProxy(t, f.url())
	opts, _ := ftOpts(t)
	u, l := ftStart(t, config.Upstream{Name: "web", URL: p.srv.URL + "/mcp"}, opts)
	ftReady(t, u)
	cs, _ := u.Session()
	old := cs.ID()
	listed := l.changed.Load()
	p.mode.Store("404once")
	_, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "pid"})
	if err == nil || !strings.Contains(err.Error(), "'web'") {
		t.Fatalf("call answered 404: %v", err)
	}
	ftWait(t, "a new session", func() bool {
		cs, err := u.Session()
		return err == nil && cs.ID() != old
	})
	// The session is live a moment before its lists are handed on.
	ftWait(t, "a re-list with the new session", func() bool { return l.changed.Load() > listed })
	ftCall(t, u, "pid", nil)
	if st := u.Status(); st.Restarts != 1 || st.State != StateReady {
		t.Errorf("status = %+v", st)
	}
}

// TestFaultSecretsRedacted: header values, URL credentials and extra
// secrets never reach the log, the status or an error.
func TestFaultSecretsRedacted(t *testing.T) {
	const (
		token  = "tok-4f1a9c77e2"
		apiKey = "key-93b0d1aa55"
		extra  = "xsecret-1234"
	)
	opts, lg := ftOpts(t)
	opts.Secrets = []string{extra}
	opts.UnhealthyAfter = 2
	opts.Cooldown = time.Minute
	// Port 1 refuses connections: the error text carries the URL.
	u, _ := ftStart(t, config.Upstream{Name: "remote", URL: "http://" + extra + ":pw-" + extra + "@127.0.0.1:1/mcp?api_key=" + apiKey,
		Headers: map[string]string{"Authorization": "Bearer " + token}}, opts)
	ftWait(t, "unhealthy", func() bool { return u.Status().State == StateUnhealthy })
	_, err := u.CallTool(ftCtx(t), nil, &mcp.CallToolParams{Name: "x"})
	st := u.Status()
	for where, text := range map[string]string{"log": lg.String(), "last_error": st.LastError, "call error": fmt.Sprint(err)} {
		for _, s := range []string{token, apiKey, extra} {
			if strings.Contains(text, s) {
				t.Errorf("%s contains secret %q:\n%s", where, s, text)
			}
		}
	}
	if !strings.Contains(st.LastError, redact.Redacted) || !strings.Contains(st.LastError, "connection refused") {
		t.Errorf("last_error = %q, want the URL redacted and the cause kept", st.LastError)
	}
}

func TestSecretValues(t *testing.T) {
	c := config.Upstream{
		URL:     "https://user:hunter2@example.com/mcp?key=abcd1234&x=1",
		Headers: map[string]string{"Authorization": "Bearer abcdef", "X-Api-Key": "k-123456"},
		Env:     map[string]string{"API_TOKEN": "xyz", "DEBUG": "true", "DATABASE_URL": "postgres://u:p@h/db"},
	}
	got := c.SecretValues()
	for _, want := range []string{"hunter2", "abcd1234", "Bearer abcdef", "abcdef", "k-123456", "xyz", "postgres://u:p@h/db"} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("SecretValues() = %q lacks %q", got, want)
		}
	}
	for _, not := range []string{"true", "1"} {
		for _, g := range got {
			if g == not {
				t.Errorf("SecretValues() redacts %q, which only mangles logs", not)
			}
		}
	}
}

// TestFaultChildEnv: a stdio server gets its configured env plus a minimal
// base; the hub's other variables only with inherit_env.
func TestFaultChildEnv(t *testing.T) {
	t.Setenv("MCP_HUB_TEST_HOST_SECRET", "host-only-value")
	opts, _ := ftOpts(t)
	env := func(u *Upstream, name string) string {
		return fixture.ResultText(ftCall(t, u, "env", map[string]any{"name": name}))
	}

	u, _ := ftStart(t, config.Upstream{Command: fixture.Build(t), Args: []string{"-env-tool"}, Env: map[string]string{"GIVEN": "configured"}}, opts)
	ftReady(t, u)
	if got := env(u, "GIVEN"); got != "configured" {
		t.Errorf("GIVEN = %q", got)
	}
	if got := env(u, "MCP_HUB_TEST_HOST_SECRET"); got != "(unset)" {
		t.Errorf("without inherit_env the child sees MCP_HUB_TEST_HOST_SECRET = %q", got)
	}
	if got := env(u, "PATH"); got != os.Getenv("PATH") {
		t.Errorf("PATH = %q, want the hub's", got)
	}

	u2, _ := ftStart(t, config.Upstream{Name: "inherit", Command: fixture.Build(t), Args: []string{"-env-tool"}, InheritEnv: true, Env: map[string]string{"GIVEN": "configured"}}, opts)
	ftReady(t, u2)
	if got := env(u2, "MCP_HUB_TEST_HOST_SECRET"); got != "host-only-value" {
		t.Errorf("with inherit_env: MCP_HUB_TEST_HOST_SECRET = %q", got)
	}
	if got := env(u2, "GIVEN"); got != "configured" {
		t.Errorf("with inherit_env: GIVEN = %q", got)
	}
}
