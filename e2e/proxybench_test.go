//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// Proxy overhead (issue 2, acceptance 4): the same tool of the same server
// program called directly over streamable HTTP and through `mcp-hub serve
// --http` fronting it over stdio, in one run, at 1 and 16 concurrent sessions.
//
//	go test -run '^$' -bench Proxy -benchtime 4000x ./e2e
//
// Each sub-benchmark makes b.N calls on each path, spread over its sessions
// (one go-sdk client session each), after a warm-up, and reports p50/p99
// latency and calls/s of both paths and their ratios; the parent prints a
// table against the targets. The two paths alternate in rounds, so load from
// other processes on a shared machine hits both alike. Do not add -race: it
// slows the hub (this test binary) far more than the upstream.
//
// MCP_HUB_BENCH_BASELINE=/path/to/mcp-hub adds a third path in the same
// rounds: that binary (another version of the hub, say the main branch's)
// in the hub's place, so a change's cost is measured A/B in one run. For a
// fair A/B, MCP_HUB_BENCH_HUB=/path/to/mcp-hub runs a built binary as the
// hub too: this test binary, though running the same main(), measured ~9%
// faster at one session than `go build` of the same code.
//
// MCP_HUB_BENCH_HUB_FLAGS adds flags to that hub's `serve` (not the
// baseline's), e.g. --share-cpus, to A/B a flag with the same binary.
//
// MCP_HUB_BENCH_PEER=/path/to/mcp-proxy adds TBXark/mcp-proxy (see
// scripts/memory.sh for building it) in front of the same server over
// stdio, as one more path in the same rounds, so the hub is compared with
// it in one run.
//
// MCP_HUB_BENCH_FLOOR=1 adds testdata/floorproxy the same way: the least a
// proxy from streamable HTTP to stdio can do, answering as the hub does, so
// that what the second hop itself costs on the machine is measured, not
// assumed. MCP_HUB_BENCH_FLOOR=json has it answer as application/json, as
// the peer does, to measure what the answer's format costs.
//
// For every proxy path, the table gives the CPU its process and the server
// it started used per call over the rounds (/proc schedstat): less moved by
// other load than latency.

const (
	benchTool      = probeTool // test_simple_text: a tiny text result
	warmUpPerSess  = 50
	benchRounds    = 10   // direct and hub alternate this many times
	p50RatioTarget = 1.45 // hub p50 at most 1.45x direct
	rpsRatioTarget = 1.0  // hub calls/s at 16 sessions at least 1.0x direct
)

var benchSessions = []int{1, 16}

type latencyStats struct {
	lat  []time.Duration // one per call, sorted by summarize
	wall time.Duration   // sum of the wall time of the batches
}

func (s *latencyStats) add(o latencyStats) {
	s.lat = append(s.lat, o.lat...)
	s.wall += o.wall
}

func (s *latencyStats) summarize() { slices.Sort(s.lat) }
func (s latencyStats) calls() int  { return len(s.lat) }
func (s latencyStats) p50() time.Duration {
	return s.lat[len(s.lat)*50/100]
}
func (s latencyStats) p99() time.Duration {
	return s.lat[min(len(s.lat)-1, len(s.lat)*99/100)]
}
func (s latencyStats) callsPerSec() float64 { return float64(len(s.lat)) / s.wall.Seconds() }

func BenchmarkProxy(b *testing.B) {
	if raceEnabled() {
		b.Log("WARNING: built with -race: the hub runs as this test binary, so its figures are not representative")
	}
	ev := everythingServer(b)
	directURL, _ := startEverythingHTTP(b, ev, "everything-direct")
	cfg := fmt.Sprintf("servers:\n  everything:\n    command: %s\n    prefix: \"\"\n", strconv.Quote(ev))
	hub := &benchPath{name: "hub"}
	if bin := os.Getenv("MCP_HUB_BENCH_HUB"); bin != "" {
		hub.url, hub.proc = startHubBinary(b, "hub", bin, cfg, strings.Fields(os.Getenv("MCP_HUB_BENCH_HUB_FLAGS"))...)
	} else {
		hub.url, hub.proc = startHub(b, "hub", cfg, ev)
	}
	// The paths measured against the direct one, in the order of a round.
	paths := []*benchPath{hub}
	baselineBin := os.Getenv("MCP_HUB_BENCH_BASELINE")
	var baseline, peer, floor *benchPath
	if baselineBin != "" {
		baseline = &benchPath{name: "baseline", what: baselineBin}
		baseline.url, baseline.proc = startHubBinary(b, "baseline", baselineBin, cfg)
		paths = append(paths, baseline)
	}
	peerBin := os.Getenv("MCP_HUB_BENCH_PEER")
	if peerBin != "" {
		peer = &benchPath{name: "peer", what: "TBXark/mcp-proxy, " + peerBin}
		peer.url, peer.proc = startPeer(b, peerBin, ev)
		paths = append(paths, peer)
	}
	if f := os.Getenv("MCP_HUB_BENCH_FLOOR"); f != "" {
		floor = &benchPath{name: "floor", what: "testdata/floorproxy -json=" + strconv.FormatBool(f == "json")}
		floor.url, floor.proc = startFloor(b, ev, f == "json")
		paths = append(paths, floor)
	}

	direct := &benchPath{name: "direct", url: directURL}
	results := map[int]map[*benchPath]pathResult{}
	for _, sessions := range benchSessions {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			all := append([]*benchPath{direct}, paths...)
			pools := make(map[*benchPath][]*mcp.ClientSession, len(all))
			for _, p := range all {
				pools[p] = openSessions(b, p.url, sessions)
				for range warmUpPerSess {
					if err := callAll(pools[p]); err != nil {
						b.Fatalf("%s warm-up: %v", p.name, err)
					}
				}
			}
			b.ResetTimer()
			res := make(map[*benchPath]pathResult, len(all))
			cpu0 := make(map[*benchPath][2]time.Duration, len(paths))
			for _, p := range paths {
				cpu0[p] = p.cpu()
			}
			for r := range benchRounds {
				n := b.N / benchRounds
				if r < b.N%benchRounds {
					n++
				}
				if n == 0 {
					continue
				}
				// The direct path first, then the others in turn, reversed
				// every other round so that none always runs right after
				// the direct one.
				order := slices.Clone(paths)
				if r%2 == 1 {
					slices.Reverse(order)
				}
				for _, p := range append([]*benchPath{direct}, order...) {
					st, err := callConcurrently(pools[p], n)
					if err != nil {
						b.Fatalf("%s: %v", p.name, err)
					}
					pr := res[p]
					pr.add(st)
					res[p] = pr
				}
			}
			b.StopTimer()
			for _, p := range all {
				pr := res[p]
				pr.summarize()
				if p.proc != nil {
					now := p.cpu()
					pr.own, pr.upstream = now[0]-cpu0[p][0], now[1]-cpu0[p][1]
				}
				res[p] = pr
			}
			d, h := res[direct], res[hub]
			b.ReportMetric(us(d.p50()), "direct-p50-µs")
			b.ReportMetric(us(h.p50()), "hub-p50-µs")
			b.ReportMetric(us(d.p99()), "direct-p99-µs")
			b.ReportMetric(us(h.p99()), "hub-p99-µs")
			b.ReportMetric(d.callsPerSec(), "direct-calls/s")
			b.ReportMetric(h.callsPerSec(), "hub-calls/s")
			b.ReportMetric(float64(h.p50())/float64(d.p50()), "p50-ratio")
			b.ReportMetric(h.callsPerSec()/d.callsPerSec(), "calls/s-ratio")
			if baseline != nil {
				bl := res[baseline]
				b.ReportMetric(float64(h.p50())/float64(bl.p50()), "hub/baseline-p50")
				b.ReportMetric(h.callsPerSec()/bl.callsPerSec(), "hub/baseline-calls/s")
			}
			if (peer != nil || floor != nil) && h.calls() >= benchRounds {
				// One line a run of the sub-benchmark (-count runs it again,
				// the parent once) for scripts/compare.sh: p50 in µs, calls/s,
				// and for each proxy the CPU per call of its own process and
				// of the server it started.
				fields := []string{fmt.Sprintf("sessions=%d", sessions)}
				for _, p := range all {
					pr := res[p]
					fields = append(fields, fmt.Sprintf("%s_p50_us=%.1f %s_cps=%.1f", p.name, us(pr.p50()), p.name, pr.callsPerSec()))
					if p.proc != nil {
						fields = append(fields, fmt.Sprintf("%s_cpu_us=%.1f %s_upstream_cpu_us=%.1f", p.name, pr.cpuPerCall(pr.own), p.name, pr.cpuPerCall(pr.upstream)))
					}
				}
				fmt.Printf("\ncompare %s\n", strings.Join(fields, " "))
			}
			// Sub-benchmarks run with growing b.N; the last run counts.
			results[sessions] = res
		})
	}

	// Printed rather than logged: the log of a benchmark with sub-benchmarks
	// is not shown unless it fails.
	fmt.Printf("\nproxy latency, tool %s: direct = everything-server over streamable HTTP, hub = mcp-hub serve --http, same server over stdio\n", benchTool)
	var sb strings.Builder
	w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "sessions\tpath\tcalls\tp50\tp99\tcalls/s\tCPU/call\tits server's\t\n")
	for _, n := range benchSessions {
		res, ok := results[n]
		if !ok {
			continue
		}
		for _, p := range append([]*benchPath{direct}, paths...) {
			pr := res[p]
			cpu := "\t"
			if p.proc != nil {
				cpu = fmt.Sprintf("%.0fµs\t%.0fµs", pr.cpuPerCall(pr.own), pr.cpuPerCall(pr.upstream))
			}
			fmt.Fprintf(w, "%d\t%s\t%d\t%v\t%v\t%.0f\t%s\t\n", n, p.name, pr.calls(),
				pr.p50().Round(time.Microsecond), pr.p99().Round(time.Microsecond), pr.callsPerSec(), cpu)
		}
	}
	w.Flush()
	fmt.Print(sb.String())
	fmt.Println("hub/direct:")
	for _, n := range benchSessions {
		res, ok := results[n]
		if !ok {
			continue
		}
		d, h := res[direct], res[hub]
		p50 := float64(h.p50()) / float64(d.p50())
		rps := h.callsPerSec() / d.callsPerSec()
		rpsNote := ""
		if n == 16 {
			rpsNote = verdict(rps >= rpsRatioTarget, fmt.Sprintf(">= %.2f", rpsRatioTarget))
		}
		fmt.Printf("  %2d sessions: p50 %.2fx %s  p99 %.2fx  calls/s %.2fx %s\n", n,
			p50, verdict(p50 <= p50RatioTarget, fmt.Sprintf("<= %.2f", p50RatioTarget)),
			float64(h.p99())/float64(d.p99()), rps, rpsNote)
	}
	for _, other := range []*benchPath{peer, floor, baseline} {
		if other == nil {
			continue
		}
		fmt.Printf("hub/%s (%s), same rounds:\n", other.name, other.what)
		for _, n := range benchSessions {
			res, ok := results[n]
			if !ok {
				continue
			}
			d, h, o := res[direct], res[hub], res[other]
			fmt.Printf("  %2d sessions: %s p50 %v (%.2fx direct)  hub p50 %v (%.2fx direct)  hub/%s p50 %.3fx  p99 %.3fx  calls/s %.3fx  CPU/call %.3fx\n", n,
				other.name, o.p50().Round(time.Microsecond), float64(o.p50())/float64(d.p50()),
				h.p50().Round(time.Microsecond), float64(h.p50())/float64(d.p50()),
				other.name, float64(h.p50())/float64(o.p50()), float64(h.p99())/float64(o.p99()),
				h.callsPerSec()/o.callsPerSec(), h.cpuPerCall(h.own)/o.cpuPerCall(o.own))
		}
	}
}

// benchPath is one way to the everything-server the proxy benchmark calls
// through: directly, or through a proxy process it started.
type benchPath struct {
	name string // in the output: "hub", "peer", "floor", ...
	what string // what runs there, for the summary
	url  string
	proc *child // nil for the direct path
}

// cpu is the CPU time used so far by the path's proxy process and by the
// server it started.
func (p *benchPath) cpu() [2]time.Duration {
	pid := p.proc.cmd.Process.Pid
	return [2]time.Duration{processCPU(pid), childrenCPU(pid)}
}

// pathResult is what one path measured in a sub-benchmark.
type pathResult struct {
	latencyStats
	own, upstream time.Duration // CPU of the proxy and of its server, over the rounds
}

func (r pathResult) cpuPerCall(d time.Duration) float64 { return us(d) / float64(max(1, r.calls())) }

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// processCPU is the CPU time all threads of a process have used so far, in
// nanoseconds of each thread's schedstat (Linux).
func processCPU(pid int) time.Duration {
	var total time.Duration
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var ns int64
		fmt.Sscan(string(data), &ns)
		total += time.Duration(ns)
	}
	return total
}

// childrenCPU is the CPU time the direct children of a process have used
// so far (processCPU of each).
func childrenCPU(pid int) time.Duration {
	var total time.Duration
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		data, _ := os.ReadFile(f)
		for _, field := range strings.Fields(string(data)) {
			if child, err := strconv.Atoi(field); err == nil {
				total += processCPU(child)
			}
		}
	}
	return total
}

// startHubBinary runs an mcp-hub binary (MCP_HUB_BENCH_HUB, _BASELINE) on
// the same config and waits until it is ready.
func startHubBinary(tb testing.TB, name, bin, cfgYAML string, serveFlags ...string) (string, *child) {
	tb.Helper()
	cfgPath := filepath.Join(tb.TempDir(), "hub.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfgYAML), 0o644); err != nil {
		tb.Fatal(err)
	}
	addr := freeAddr(tb)
	c := startChild(tb, name, nil, bin, append([]string{"--config", cfgPath, "serve", "--http", addr}, serveFlags...)...)
	url := "http://" + addr + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), hubReadyTimeout)
	defer cancel()
	if err := waitMCPReady(ctx, url, c); err != nil {
		tb.Fatalf("%s (%s) did not become ready: %v\n%s", name, bin, err, c.logTail(40))
	}
	return url, c
}

// startPeer runs TBXark/mcp-proxy (MCP_HUB_BENCH_PEER) in front of the
// everything-server ev over stdio and waits until it is ready.
func startPeer(tb testing.TB, bin, ev string) (string, *child) {
	tb.Helper()
	addr := freeAddr(tb)
	cfg := fmt.Sprintf(`{"mcpProxy": {"baseURL": "http://%s", "addr": %q, "name": "mcp-proxy", "version": "0", "type": "streamable-http",
  "options": {"logEnabled": false}}, "mcpServers": {"everything": {"command": %q}}}`, addr, addr, ev)
	cfgPath := filepath.Join(tb.TempDir(), "mcp-proxy.json")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		tb.Fatal(err)
	}
	c := startChild(tb, "peer", nil, bin, "-config", cfgPath)
	url := "http://" + addr + "/everything/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), hubReadyTimeout)
	defer cancel()
	if err := waitMCPReady(ctx, url, c); err != nil {
		tb.Fatalf("peer (%s) did not become ready: %v\n%s", bin, err, c.logTail(40))
	}
	return url, c
}

// startFloor runs testdata/floorproxy (MCP_HUB_BENCH_FLOOR) in front of the
// everything-server ev over stdio and waits until it is ready: the least a
// proxy from streamable HTTP to stdio can do, answering as the hub does, or
// as application/json.
func startFloor(tb testing.TB, ev string, asJSON bool) (string, *child) {
	tb.Helper()
	addr := freeAddr(tb)
	c := startChild(tb, "floor", nil, testdataProgram(tb, "floorproxy"), fmt.Sprintf("-json=%t", asJSON), "-http", addr, "--", ev)
	url := "http://" + addr + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), hubReadyTimeout)
	defer cancel()
	if err := waitMCPReady(ctx, url, c); err != nil {
		tb.Fatalf("floor proxy did not become ready: %v\n%s", err, c.logTail(40))
	}
	return url, c
}

func verdict(ok bool, target string) string {
	if ok {
		return "(target " + target + ": ok)"
	}
	return "(target " + target + ": MISSED)"
}

// openSessions connects n independent go-sdk client sessions to url. They
// share one HTTP client whose pool holds a connection per session, so neither
// path pays for reconnecting.
func openSessions(tb testing.TB, url string, n int) []*mcp.ClientSession {
	tb.Helper()
	return openSessionsAt(tb, url, n, legacyProtocol)
}

// legacyProtocol is the era the benchmark's sessions ask for: the one the
// everything-server it measures directly speaks (stateful), so that the
// hub and the direct server are measured doing the same thing
// (BenchmarkProxyEras measures each era).
const legacyProtocol = "2025-11-25"

// openSessionsAt is openSessions with the protocol version the clients ask
// for ("": go-sdk's newest, which a server may negotiate down).
func openSessionsAt(tb testing.TB, url string, n int, version string) []*mcp.ClientSession {
	tb.Helper()
	httpClient := &http.Client{Transport: &http.Transport{
		MaxIdleConns:        4 * n,
		MaxIdleConnsPerHost: 4 * n,
		IdleConnTimeout:     time.Minute,
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool := make([]*mcp.ClientSession, n)
	for i := range pool {
		client := mcp.NewClient(&mcp.Implementation{Name: "mcp-hub-bench", Version: "0"}, nil)
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: httpClient, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			tb.Fatalf("session %d of %d to %s: %v", i+1, n, url, err)
		}
		pool[i] = cs
	}
	tb.Cleanup(func() {
		for _, cs := range pool {
			cs.Close()
		}
		httpClient.CloseIdleConnections()
	})
	return pool
}

// callTool calls benchTool once and checks that it returned its text.
func callTool(ctx context.Context, cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: benchTool, Arguments: map[string]any{}})
	if err != nil {
		return nil, err
	}
	if res.IsError || len(res.Content) == 0 {
		data, _ := json.Marshal(res)
		return nil, fmt.Errorf("%s returned an error or no content: %s", benchTool, data)
	}
	return res, nil
}

// callAll calls the tool once on every session, concurrently.
func callAll(pool []*mcp.ClientSession) error {
	var wg sync.WaitGroup
	errs := make([]error, len(pool))
	for i, cs := range pool {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, errs[i] = callTool(ctx, cs)
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// callConcurrently makes exactly total calls, each session calling in a loop
// until the shared budget is spent, and returns their latencies (unsorted) and
// the wall time of the whole batch.
func callConcurrently(pool []*mcp.ClientSession, total int) (latencyStats, error) {
	lat := make([]time.Duration, total)
	var next atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for _, cs := range pool {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			for {
				i := next.Add(1) - 1
				if i >= int64(total) {
					return
				}
				t0 := time.Now()
				if _, err := callTool(ctx, cs); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("call %d: %w", i, err) })
					next.Store(int64(total)) // stop everyone
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return latencyStats{}, firstErr
	}
	return latencyStats{lat: lat, wall: time.Since(start)}, nil
}

// TestProxySessions is the benchmark's harness as a quick test (it also runs
// under -race): concurrent sessions through the hub get the same result as
// directly, and none of the calls fails.
func TestProxySessions(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the hub and builds everything-server; skipped with -short")
	}
	ev := everythingServer(t)
	directURL, _ := startEverythingHTTP(t, ev, "everything-direct")
	cfg := fmt.Sprintf("servers:\n  everything:\n    command: %s\n    prefix: \"\"\n", strconv.Quote(ev))
	hubURL, hub := startHub(t, "hub", cfg, ev)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var want []byte
	for _, tg := range []struct{ name, url string }{{"direct", directURL}, {"hub", hubURL}} {
		pool := openSessions(t, tg.url, 4)
		res, err := callTool(ctx, pool[0])
		if err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		got, _ := json.Marshal(res)
		if want == nil {
			want = got
		} else if string(got) != string(want) {
			t.Errorf("%s through the hub returned\n%s\nwant (directly)\n%s", benchTool, got, want)
		}
		if _, err := callConcurrently(pool, 100); err != nil {
			t.Errorf("%s: 100 calls over 4 concurrent sessions: %v\nhub log:\n%s", tg.name, err, hub.logTail(40))
		}
	}
}
