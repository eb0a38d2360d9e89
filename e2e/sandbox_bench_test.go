//go:build linux

package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/sandbox"
)

// Sandbox overhead (issue 36, acceptance 3): go-sdk's everything-server over
// stdio through `mcp-hub serve --http`, once with `sandbox: true` and once
// without, the two hubs called in alternating rounds (one session each, so
// load from other processes hits both alike); and the start-up cost of the
// server itself (spawn and MCP initialize) with and without the sandbox.
//
//	go test -run '^$' -bench Sandbox -benchtime 4000x ./cmd/mcp-hub
//
// Do not add -race. docs/performance.md quotes a run.
func BenchmarkSandbox(b *testing.B) {
	needBwrap(b)
	ev := everythingServer(b)
	stdio := fmt.Sprintf("servers:\n  everything:\n    command: %s\n    prefix: \"\"\n", strconv.Quote(ev))
	plainURL, _ := startHub(b, "hub-plain", stdio, "")
	boxURL, _ := startHub(b, "hub-sandboxed", stdio+"    sandbox: true\n", "")
	plain, box := openSessions(b, plainURL, 1), openSessions(b, boxURL, 1)
	for _, pool := range [][]*mcp.ClientSession{plain, box} {
		for range warmUpPerSess {
			if err := callAll(pool); err != nil {
				b.Fatal(err)
			}
		}
	}
	per := max(b.N/benchRounds, 1)
	var ps, bs latencyStats
	b.ResetTimer()
	// Which hub goes first alternates too: a round's first half may run
	// in different weather than its second.
	for r := range 2 * benchRounds {
		first, second, fs, ss := plain, box, &ps, &bs
		if r%2 == 1 {
			first, second, fs, ss = box, plain, &bs, &ps
		}
		for _, run := range []struct {
			pool  []*mcp.ClientSession
			stats *latencyStats
		}{{first, fs}, {second, ss}} {
			s, err := callConcurrently(run.pool, max(per/2, 1))
			if err != nil {
				b.Fatal(err)
			}
			run.stats.add(s)
		}
	}
	b.StopTimer()
	ps.summarize()
	bs.summarize()
	ratio := float64(bs.p50()) / float64(ps.p50())
	b.ReportMetric(float64(ps.p50().Microseconds()), "plain-p50-µs")
	b.ReportMetric(float64(bs.p50().Microseconds()), "sandbox-p50-µs")
	b.ReportMetric(ratio, "p50-ratio")

	plainStart := startupTimes(b, ev, nil)
	boxStart := startupTimes(b, ev, sandbox.New(sandbox.Options{StateDir: b.TempDir()}))
	fmt.Printf("\nsandbox overhead, everything-server over stdio through the hub, %d calls each:\n", ps.calls())
	fmt.Printf("  per call   p50 %v unsandboxed, %v sandboxed (%.3fx) %s; p99 %v, %v\n",
		ps.p50(), bs.p50(), ratio, verdict(ratio <= 1.05, "≤1.05x"), ps.p99(), bs.p99())
	fmt.Printf("  start-up   median %v unsandboxed, %v sandboxed (spawn + initialize, %d starts each)\n",
		median(plainStart), median(boxStart), len(plainStart))
}

// startupTimes starts the server (confined by box, if set) and completes
// the MCP handshake with it, several times, and returns how long each took.
func startupTimes(b *testing.B, ev string, box *sandbox.Runner) []time.Duration {
	b.Helper()
	var out []time.Duration
	for range 10 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		t0 := time.Now()
		cmd := exec.Command(ev)
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Dir(ev)}
		release := func() {}
		if box != nil {
			var err error
			if release, err = box.Wrap(ctx, "bench", &config.Sandbox{Enabled: true}, cmd); err != nil {
				b.Fatal(err)
			}
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, fixture.Legacy())
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(t0))
		cs.Close()
		release()
		cancel()
	}
	return out
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
