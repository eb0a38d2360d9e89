//go:build linux

// TestSessionMemory measures what an idle streamable-HTTP session costs the
// real mcp-hub binary (this test binary as mcp-hub, see TestMain): N
// sessions are opened (initialize, then notifications/initialized) and left
// idle with their connections closed; the hub's RSS and goroutines are
// read before and after, each time once the hub has collected its garbage
// and returned the freed memory (loadCollect). Per session = delta / N.
//
// Two configs: one stdio fixture upstream with discovery off, and the
// bundled hub.yaml (four builtins, discovery on, every server but time
// deferred); and the bundled hub.yaml again with each session's GET stream
// held open, as the TypeScript SDK's client does (scripts/memory.sh measures
// that against TBXark/mcp-proxy): its goroutine stacks are bounded apart,
// since the stack of the goroutine holding a GET stream is halved by the
// collector only while the frames under it stay small (docs/go-sdk.md).
//
// Skipped unless MCP_HUB_SESSIONS=1. Measure without
// -race:
//
//	MCP_HUB_SESSIONS=1 go test -run '^TestSessionMemory$' -count=1 -v -timeout 15m ./cmd/mcp-hub
//
// Environment: MCP_HUB_SESSIONS_N (1000) sessions; MCP_HUB_SESSIONS_PROFILE
// a directory: the hub's heap profile with the sessions open is written
// there (<config>.heap; `go tool pprof -sample_index=inuse_space`).

package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// sessionMemoryTarget is issue 15's target of RSS per idle session;
// sessionHeldBound bounds what a session holds (live heap and goroutine
// stacks), which, unlike RSS, does not depend on when the GC ran.
const (
	sessionMemoryTarget = 50 // KiB
	sessionHeldBound    = 16 // KiB
	// sessionGETStackBound bounds the goroutine stacks of a session with
	// its GET stream open: 8 KiB for the stream's, two or three small
	// ones. With the stream's at 16 KiB it would be over.
	sessionGETStackBound = 18 // KiB
)

func TestSessionMemory(t *testing.T) {
	if os.Getenv("MCP_HUB_SESSIONS") != "1" {
		t.Skip("set MCP_HUB_SESSIONS=1 to measure the memory of idle sessions (see the comment at the top of sessions_test.go)")
	}
	if raceEnabled() {
		t.Log("built with -race: the figures include the race detector's shadow memory")
	}
	n := limitsEnv(t, "MCP_HUB_SESSIONS_N", 1000)
	raiseFileLimit(t, 4096)
	bundled, err := os.ReadFile(filepath.Join("..", "hub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     func(t *testing.T) string
		streams bool // hold each session's GET stream open
	}{
		{"one-stdio-upstream", func(t *testing.T) string {
			return fmt.Sprintf("servers:\n  fx:\n    command: %q\n    args: [-name, fx]\n", fixture.Build(t))
		}, false},
		{"bundled-hub.yaml", func(t *testing.T) string { return string(bundled) }, false},
		{"bundled-hub.yaml-GET-streams", func(t *testing.T) string { return string(bundled) }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := sessionMemory(t, tc.name, tc.cfg(t), n, tc.streams)
			t.Logf("%s: %.1f KiB RSS (target %d), %.1f KiB held (%.1f of it stacks) and %.2f goroutines per idle session", tc.name, m.busyKiB, sessionMemoryTarget, m.heldKiB, m.stackKiB, m.goroutines)
			switch {
			case tc.streams && m.stackKiB > sessionGETStackBound:
				t.Errorf("%s: the goroutine stacks of a session with its GET stream open take %.1f KiB, want at most %d", tc.name, m.stackKiB, sessionGETStackBound)
			case !tc.streams && m.heldKiB > sessionHeldBound:
				t.Errorf("%s: an idle session holds %.1f KiB (live heap and stacks), want at most %d", tc.name, m.heldKiB, sessionHeldBound)
			}
		})
	}
}

// sessionCost is what one session costs: RSS (KiB, after provoked
// collections), live heap and goroutine stacks (KiB), stacks alone,
// goroutines.
type sessionCost struct {
	busyKiB, heldKiB, stackKiB, goroutines float64
}

// sessionMemory starts the hub on cfg, opens n idle sessions (with their
// GET streams open if streams) and returns what each one costs.
func sessionMemory(t *testing.T, name, cfg string, n int, streams bool) sessionCost {
	pprofAddr := freeAddr(t)
	t.Setenv("MCP_HUB_PPROF", pprofAddr) // the hub inherits it
	t.Setenv("MCP_HUB_NOTES_FILE", filepath.Join(t.TempDir(), "notes.json"))
	base, pid, _ := limitsHub(t, cfg)
	// Warm-up: sessions opened and deleted, so that what is allocated
	// once (HTTP server, SDK caches, pools) is in the baseline.
	for _, id := range sessionsOpen(t, base, 50) {
		sessionDelete(t, base, id)
	}
	loadWaitSessions(t, base, 0, time.Minute)
	before := sessionFigures(t, base, pid, pprofAddr)
	ids := sessionsOpen(t, base, n)
	// The hub counts a session once its initialized notification has been
	// handled, which may be just after the answer to it.
	if !loadWaitSessions(t, base, n, time.Minute) {
		t.Fatalf("%d sessions initialized, want %d", loadFetchHealth(t, base).Sessions, n)
	}
	if streams {
		defer sessionsStream(t, base, ids)()
	}
	after := sessionFigures(t, base, pid, pprofAddr)
	if dir := os.Getenv("MCP_HUB_SESSIONS_PROFILE"); dir != "" {
		sessionProfile(t, pprofAddr, "heap?gc=1", filepath.Join(dir, name+".heap"))
		sessionProfile(t, pprofAddr, "goroutine?debug=1", filepath.Join(dir, name+".goroutines.txt"))
	}
	each := func(a, b int64) float64 { return float64(b-a) / float64(n) }
	busyKiB := each(before.busyKB, after.busyKB)
	heapKiB := each(int64(before.heapLive), int64(after.heapLive)) / 1024
	stackKiB := each(before.stacks, after.stacks) / 1024
	goroutines := each(int64(before.goroutines), int64(after.goroutines))
	t.Logf("%d idle sessions, per session: RSS %.1f KiB after provoked GCs (GOGC=400 heap goal, %d -> %d KiB), %.1f KiB once the hub is quiet (%d -> %d KiB); "+
		"live heap %.1f KiB, goroutine stacks %.1f KiB, %.2f goroutines (%d -> %d)",
		n, busyKiB, before.busyKB, after.busyKB, each(before.quietKB, after.quietKB), before.quietKB, after.quietKB,
		heapKiB, stackKiB, goroutines, before.goroutines, after.goroutines)
	for _, id := range ids {
		sessionDelete(t, base, id)
	}
	return sessionCost{busyKiB: busyKiB, heldKiB: heapKiB + stackKiB, stackKiB: stackKiB, goroutines: goroutines}
}

// sessionsStream opens the GET stream of each session, as the TypeScript
// SDK's client does after initializing, and waits until each has its
// answer's headers; the returned function closes them.
func sessionsStream(t *testing.T, base string, ids []string) (closeAll func()) {
	t.Helper()
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	bodies := make([]io.Closer, 0, len(ids))
	for _, id := range ids {
		req, err := http.NewRequest(http.MethodGet, base+"/mcp", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("GET stream of session %s: %v", id, err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			t.Fatalf("GET stream of session %s: %s", id, resp.Status)
		}
		bodies = append(bodies, resp.Body)
	}
	return func() {
		for _, b := range bodies {
			b.Close()
		}
		c.CloseIdleConnections()
	}
}

// sessionFig are the hub's figures at one point of the measurement.
type sessionFig struct {
	busyKB, quietKB int64 // RSS
	heapLive        uint64
	stacks          int64 // bytes of goroutine stacks in use
	goroutines      int
}

// sessionFigures reads the hub's memory twice: after provoked collections
// (loadCollect: what RSS settles to while the hub has work), then once the
// hub has been quiet and RSS stops falling (the runtime's scavenger
// returns freed memory in the background).
func sessionFigures(t *testing.T, base string, pid int, pprofAddr string) sessionFig {
	busy := loadCollect(t, base, pid, 2*time.Minute)
	quiet, _ := limitsSettledRSS(t, pid, 0, 0, 90*time.Second)
	r := loadReadResources(t, base, pid)
	return sessionFig{busyKB: busy.rssKB, quietKB: quiet, heapLive: r.heapLive,
		stacks: sessionMemStat(t, pprofAddr, "Stack"), goroutines: r.goroutines}
}

// sessionsOpen opens n sessions (initialize, then
// notifications/initialized), 32 at a time, and closes the connections
// it used: what stays is the sessions alone.
func sessionsOpen(t *testing.T, base string, n int) []string {
	t.Helper()
	c := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	defer c.CloseIdleConnections()
	ids := make([]string, n)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	var failed atomic.Int64
	var first atomic.Value
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			id, err := sessionOpen(c, base, i)
			if err != nil {
				failed.Add(1)
				first.CompareAndSwap(nil, err.Error())
				return
			}
			ids[i] = id
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d of %d sessions failed to open; first: %v", failed.Load(), n, first.Load())
	}
	return ids
}

func sessionOpen(c *http.Client, base string, i int) (string, error) {
	post := func(id, body string) (*http.Response, string, error) {
		req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
		if err != nil {
			return nil, "", err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if id != "" {
			req.Header.Set("Mcp-Session-Id", id)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := c.Do(req)
		if err != nil {
			return nil, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, string(b), err
	}
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"idle-%d","version":"0"}}}`, i)
	resp, body, err := post("", init)
	if err != nil {
		return "", err
	}
	id := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || id == "" || !strings.Contains(body, `"serverInfo"`) {
		return "", fmt.Errorf("initialize: %s %q", resp.Status, body)
	}
	resp, body, err = post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("notifications/initialized: %s %q", resp.Status, body)
	}
	return id, nil
}

func sessionDelete(t *testing.T, base, id string) {
	req, _ := http.NewRequest(http.MethodDelete, base+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", id)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("DELETE session: %v", err)
		return
	}
	resp.Body.Close()
}

// sessionProfile saves one of the hub's profiles to path.
func sessionProfile(t *testing.T, pprofAddr, profile, path string) {
	resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/" + profile)
	if err != nil {
		t.Fatalf("profile %s: %v", profile, err)
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, resp.Body); err != nil {
		t.Fatal(err)
	}
	t.Logf("profile: %s", path)
}

// sessionMemStat reads one runtime.MemStats figure of the hub from its
// heap profile's text form ("# Stack = 123 / 456": the first).
func sessionMemStat(t *testing.T, pprofAddr, name string) int64 {
	resp, err := http.Get("http://" + pprofAddr + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatalf("heap profile: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "# "+name+" = "); ok {
			v, _, _ = strings.Cut(v, " ")
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no %s in the hub's heap profile", name)
	return 0
}
