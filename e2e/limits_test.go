//go:build linux

// TestLimitsFigures measures the hub's resource limits on the real binary
// (this test binary as mcp-hub, see TestMain), for issue 11's figures:
//
//   - idle keep-alive: N connections each make one request and stay open;
//     the hub closes every one after http.idle_timeout;
//   - abandoned sessions: M initialize requests that never continue; after
//     session_idle_timeout the hub's RSS and goroutines are back at their
//     level before;
//   - list_changed flood: an upstream sends tools/list_changed as fast as
//     it can while a client calls it; the hub's CPU, against the same calls
//     without the flood, and the re-lists it caused.
//
// Skipped unless MCP_HUB_LIMITS=1. The figures of the issue:
//
//	ulimit -n 20000; MCP_HUB_LIMITS=1 go test -run '^TestLimitsFigures$' -count=1 -v -timeout 15m ./cmd/mcp-hub
//
// Environment: MCP_HUB_LIMITS_CONNS (10000), MCP_HUB_LIMITS_SESSIONS (5000).

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/gateway"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func limitsEnv(t *testing.T, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			t.Fatalf("%s=%q: want a positive number", name, v)
		}
		return n
	}
	return def
}

// limitsHub starts the hub on cfg over HTTP and waits until it is healthy.
func limitsHub(t *testing.T, cfg string) (base string, pid int, c *child) {
	t.Helper()
	cfgPath := filepath.Join(t.TempDir(), "hub.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	c = startChild(t, "hub", []string{envAsMain + "=1"}, self, "--config", cfgPath, "serve", "--http", addr)
	base = "http://" + addr
	fixture.Eventually(t, 60*time.Second, "the hub healthy", func() bool {
		h, err := loadGetHealth(base)
		return err == nil && h.Status == "ok"
	})
	return base, c.cmd.Process.Pid, c
}

// limitsCPU is a process's user+system CPU time.
func limitsCPU(t *testing.T, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// After the command name in parentheses: fields 14 and 15 are utime and
	// stime, in clock ticks (100 a second on Linux).
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// limitsSettledRSS waits until the quiet hub's RSS (the runtime's
// scavenger returns freed memory in the background) is at most
// want plus the fraction within, or d passes; it returns the RSS and how
// long that took. want 0: until the RSS stops falling.
func limitsSettledRSS(t *testing.T, pid int, want int64, within float64, d time.Duration) (int64, time.Duration) {
	t.Helper()
	begin := time.Now()
	deadline := begin.Add(d)
	var last int64
	steady := 0
	for {
		rss, err := loadVmRSS(pid)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case want > 0 && float64(rss) <= float64(want)*(1+within):
			return rss, time.Since(begin)
		case want == 0 && time.Since(begin) > 25*time.Second && last > 0 && rss >= last-last/100:
			if steady++; steady >= 3 {
				return rss, time.Since(begin)
			}
		default:
			steady = 0
		}
		last = rss
		if time.Now().After(deadline) {
			return rss, time.Since(begin)
		}
		time.Sleep(time.Second)
	}
}

// raiseFileLimit lifts the soft limit on open files to the hard one; the
// hub, started after, inherits it.
func raiseFileLimit(t *testing.T, need uint64) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = lim.Max
	syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	if lim.Cur < need {
		t.Skipf("open files limited to %d, need %d: raise the hard limit (ulimit -Hn)", lim.Cur, need)
	}
}

func TestLimitsFigures(t *testing.T) {
	if os.Getenv("MCP_HUB_LIMITS") != "1" {
		t.Skip("set MCP_HUB_LIMITS=1 to measure the hub's limits (see the comment at the top of limits_test.go)")
	}
	t.Run("idle keep-alive", limitsIdleConnections)
	t.Run("abandoned sessions", limitsAbandonedSessions)
	t.Run("list_changed flood", limitsListChangedFlood)
}

// limitsIdleConnections: N keep-alive connections, each after one request,
// are all closed by the hub after http.idle_timeout.
func limitsIdleConnections(t *testing.T) {
	n := limitsEnv(t, "MCP_HUB_LIMITS_CONNS", 10000)
	raiseFileLimit(t, uint64(n)+1000)
	const idle = 20 * time.Second // longer than opening them all takes
	base, pid, _ := limitsHub(t, fmt.Sprintf("servers:\n  time: {builtin: time}\nhttp: {idle_timeout: %s}\n", idle))
	addr := strings.TrimPrefix(base, "http://")
	before := loadReadResources(t, base, pid)
	before.rssKB, _ = limitsSettledRSS(t, pid, 0, 0, 60*time.Second)

	var open, closed atomic.Int64
	var lastRequest atomic.Int64 // unix nanos
	var wg, ready sync.WaitGroup
	closedAt := make([]time.Time, n)
	sem := make(chan struct{}, 200)
	ready.Add(n)
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				<-sem
				ready.Done()
				t.Errorf("dial %d: %v", i, err)
				return
			}
			defer conn.Close()
			fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", addr)
			r := bufio.NewReader(conn)
			resp, err := http.ReadResponse(r, nil)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			lastRequest.Store(time.Now().UnixNano())
			open.Add(1)
			<-sem
			ready.Done()
			conn.SetReadDeadline(time.Now().Add(10 * idle))
			if _, err := r.ReadByte(); err == io.EOF {
				closedAt[i] = time.Now()
				closed.Add(1)
			}
		})
	}
	ready.Wait()
	peak := loadReadResources(t, base, pid)
	wg.Wait()
	last := time.Unix(0, lastRequest.Load())
	var latest time.Time
	for _, c := range closedAt {
		if c.After(latest) {
			latest = c
		}
	}
	rss, settled := limitsSettledRSS(t, pid, before.rssKB, 0.10, 90*time.Second)
	after := loadReadResources(t, base, pid)
	after.rssKB = rss
	t.Logf("idle keep-alive: %d connections open after one request each; idle_timeout %s", open.Load(), idle)
	t.Logf("  closed by the hub: %d of %d; the last %s after the last request", closed.Load(), n, latest.Sub(last).Round(10*time.Millisecond))
	t.Logf("  hub goroutines %d -> %d (all open) -> %d; RSS %d -> %d -> %d KiB (%s after the last close)",
		before.goroutines, peak.goroutines, after.goroutines, before.rssKB, peak.rssKB, after.rssKB, settled.Round(time.Second))
	if closed.Load() != int64(n) {
		t.Errorf("%d of %d idle connections were not closed by the hub", int64(n)-closed.Load(), n)
	}
	if after.goroutines > before.goroutines+10 {
		t.Errorf("goroutines %d after, %d before", after.goroutines, before.goroutines)
	}
}

// limitsAbandonedSessions: M initialize requests that never continue; the
// sessions end after session_idle_timeout and RSS and goroutines return to
// where they were.
func limitsAbandonedSessions(t *testing.T) {
	m := limitsEnv(t, "MCP_HUB_LIMITS_SESSIONS", 5000)
	const idle = 30 * time.Second // longer than opening them all takes
	cfg := fmt.Sprintf(`servers:
  time: {builtin: time}
  calc: {builtin: calc, defer_loading: true}
  text: {builtin: text, defer_loading: true}
discovery: {enabled: true}
session_idle_timeout: %s
`, idle)
	base, pid, _ := limitsHub(t, cfg)
	// Warm-up: one round of sessions, so that what is allocated once is in
	// the baseline.
	limitsInitialize(t, base, 100)
	fixture.Eventually(t, 2*idle+30*time.Second, "warm-up sessions to end", func() bool {
		h, err := loadGetHealth(base)
		return err == nil && h.HTTPSessions == 0
	})
	before := loadReadResources(t, base, pid)
	before.rssKB, _ = limitsSettledRSS(t, pid, 0, 0, 60*time.Second)
	t.Logf("abandoned sessions: %d initialize requests a round, never continued; session_idle_timeout %s", m, idle)
	// Two rounds: the second shows whether anything a round leaves grows.
	var firstLive uint64
	for round := 1; round <= 2; round++ {
		begin := time.Now()
		limitsInitialize(t, base, m)
		took := time.Since(begin)
		peak := loadReadResources(t, base, pid)
		ph, _ := loadGetHealth(base)
		fixture.Eventually(t, 2*idle+60*time.Second, "the abandoned sessions to end", func() bool {
			h, err := loadGetHealth(base)
			return err == nil && h.HTTPSessions == 0
		})
		ended := time.Since(begin)
		rss, settled := limitsSettledRSS(t, pid, before.rssKB, 0.10, 90*time.Second)
		after := loadReadResources(t, base, pid)
		after.rssKB = rss
		t.Logf("  round %d: %s to send (%.0f/s); %d open at the peak; all ended %s after the first; RSS back %s later",
			round, took.Round(time.Millisecond), float64(m)/took.Seconds(), ph.HTTPSessions, ended.Round(100*time.Millisecond), settled.Round(time.Second))
		t.Logf("    hub RSS %d -> %d -> %d KiB (%+.1f%%); goroutines %d -> %d -> %d; live heap %d -> %d -> %d KiB",
			before.rssKB, peak.rssKB, after.rssKB, loadPct(after.rssKB, before.rssKB), before.goroutines, peak.goroutines, after.goroutines,
			before.heapLive>>10, peak.heapLive>>10, after.heapLive>>10)
		if ph.HTTPSessions != m {
			t.Errorf("round %d: %d sessions open at the peak, want %d", round, ph.HTTPSessions, m)
		}
		if float64(after.rssKB) > float64(before.rssKB)*1.10 {
			t.Errorf("round %d: RSS %d KiB after, more than 10%% over %d KiB before", round, after.rssKB, before.rssKB)
		}
		if after.goroutines > before.goroutines+10 {
			t.Errorf("round %d: goroutines %d after, %d before", round, after.goroutines, before.goroutines)
		}
		// The first round's live heap keeps what the runtime never frees (a
		// goroutine's descriptor, once there were 10,000 of them); a second
		// round must not add to it.
		if round == 1 {
			firstLive = after.heapLive
		} else if float64(after.heapLive) > float64(firstLive)*1.10+1<<20 {
			t.Errorf("live heap grew from %d to %d KiB in the second round", firstLive>>10, after.heapLive>>10)
		}
	}
}

// limitsInitialize sends n initialize requests and never continues them.
func limitsInitialize(t *testing.T, base string, n int) {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer c.CloseIdleConnections()
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"abandoned-%d","version":"0"}}}`, i)
			req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := c.Do(req)
			if err != nil {
				failed.Add(1)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d initialize requests failed", failed.Load(), n)
	}
}

// limitsListChangedFlood: a client calls an upstream tool for a while, once
// plainly and once with each call making the upstream send 2,000
// tools/list_changed; the hub's CPU and re-lists are compared.
func limitsListChangedFlood(t *testing.T) {
	fx := fixture.Build(t)
	base, pid, _ := limitsHub(t, fmt.Sprintf("servers:\n  fx:\n    command: %q\n    args: [-name, fx, -hostile]\n", fx))
	client := mcp.NewClient(&mcp.Implementation{Name: "flood", Version: "0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, fixture.Legacy())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const d = 10 * time.Second
	phase := func(perCall int) (calls int, cpu time.Duration, notes, relists int64) {
		h0, _ := loadGetHealth(base)
		c0 := limitsCPU(t, pid)
		for end := time.Now().Add(d); time.Now().Before(end); calls++ {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__storm", Arguments: map[string]any{"n": perCall}})
			if err != nil || res.IsError {
				t.Fatalf("storm: %v %+v", err, res)
			}
		}
		// Wait for the hub to work through what was sent.
		var h1 *gateway.Health
		fixture.Eventually(t, time.Minute, "the flood handled", func() bool {
			h, err := loadGetHealth(base)
			if err != nil {
				return false
			}
			h1 = h
			return h.Servers[0].ListChanges == h0.Servers[0].ListChanges+int64(calls*perCall)
		})
		time.Sleep(2 * time.Second) // a queued re-list, if any, runs
		cpu = limitsCPU(t, pid) - c0
		h2, _ := loadGetHealth(base)
		return calls, cpu, h1.Servers[0].ListChanges - h0.Servers[0].ListChanges, h2.Servers[0].Relists - h0.Servers[0].Relists
	}
	idle0 := limitsCPU(t, pid)
	time.Sleep(d)
	idleCPU := limitsCPU(t, pid) - idle0
	calls0, cpu0, _, _ := phase(0)
	calls1, cpu1, notes, relists := phase(2000)
	pct := func(c time.Duration, over time.Duration) float64 { return 100 * c.Seconds() / over.Seconds() }
	t.Logf("list_changed flood, %s each (hub CPU as %% of one core):", d)
	t.Logf("  idle:                          %5.1f%%", pct(idleCPU, d))
	t.Logf("  %5d calls, no notifications:  %5.1f%% (%.0f µs a call)", calls0, pct(cpu0, d+2*time.Second), float64(cpu0.Microseconds())/float64(calls0))
	t.Logf("  %5d calls, 2,000 list_changed each (%d notifications, %.0f/s): %5.1f%%, %d re-lists (%.1f/s), %.1f µs a notification",
		calls1, notes, float64(notes)/d.Seconds(), pct(cpu1, d+2*time.Second), relists, float64(relists)/d.Seconds(),
		float64((cpu1-cpu0*time.Duration(calls1)/time.Duration(max(calls0, 1))).Microseconds())/float64(max(notes, 1)))
	if relists > int64(d/time.Second)*4+4 {
		t.Errorf("%d re-lists in %s: not coalesced", relists, d)
	}
}
