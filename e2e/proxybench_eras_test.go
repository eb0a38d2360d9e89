//go:build linux

package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// Per-call overhead in each protocol era (issue 23, acceptance 5), in one
// run: the same tool of everything-server called directly and through one
// hub (protocol.modern on, the server behind it over stdio), by clients of
// the 2025-11-25 era (directly: the server's stateful HTTP mode) and of the
// 2026-07-28 era (directly: its stateless mode, the one go-sdk serves that
// era in). The four paths alternate in rounds, as in BenchmarkProxy.
//
//	go test -run '^$' -bench ProxyEras -benchtime 4000x ./e2e
func BenchmarkProxyEras(b *testing.B) {
	if raceEnabled() {
		b.Log("WARNING: built with -race: the hub runs as this test binary, so its figures are not representative")
	}
	ev := everythingServer(b)
	legacyURL, _ := startEverythingHTTP(b, ev, "everything-direct")
	modernURL, _ := startEverythingStateless(b, ev, "everything-direct-stateless")
	cfg := fmt.Sprintf("protocol:\n  modern: true\nservers:\n  everything:\n    command: %s\n    prefix: \"\"\n", strconv.Quote(ev))
	hubURL, _ := startHub(b, "hub", cfg, ev)

	type path struct {
		name, url, version string
		st                 latencyStats
	}
	for _, sessions := range benchSessions {
		b.Run(fmt.Sprintf("sessions=%d", sessions), func(b *testing.B) {
			paths := []*path{
				{name: "direct 2025-11-25", url: legacyURL, version: "2025-11-25"},
				{name: "hub 2025-11-25", url: hubURL, version: "2025-11-25"},
				{name: "direct 2026-07-28", url: modernURL, version: modernSpecVersion},
				{name: "hub 2026-07-28", url: hubURL, version: modernSpecVersion},
			}
			pools := make([][]*mcp.ClientSession, len(paths))
			for i, p := range paths {
				pools[i] = openSessionsAt(b, p.url, sessions, p.version)
				if got := pools[i][0].InitializeResult().ProtocolVersion; got != p.version {
					b.Fatalf("%s: negotiated %s", p.name, got)
				}
				for range warmUpPerSess {
					if err := callAll(pools[i]); err != nil {
						b.Fatalf("%s warm-up: %v", p.name, err)
					}
				}
			}
			b.ResetTimer()
			for r := range benchRounds {
				n := b.N / benchRounds
				if r < b.N%benchRounds {
					n++
				}
				if n == 0 {
					continue
				}
				for k := range paths {
					i := (k + r) % len(paths) // no path always runs first
					st, err := callConcurrently(pools[i], n)
					if err != nil {
						b.Fatalf("%s: %v", paths[i].name, err)
					}
					paths[i].st.add(st)
				}
			}
			b.StopTimer()
			var sb strings.Builder
			w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintf(w, "sessions\tpath\tcalls\tp50\tp99\tcalls/s\t\n")
			for _, p := range paths {
				p.st.summarize()
				fmt.Fprintf(w, "%d\t%s\t%d\t%v\t%v\t%.0f\t\n", sessions, p.name, p.st.calls(),
					p.st.p50().Round(time.Microsecond), p.st.p99().Round(time.Microsecond), p.st.callsPerSec())
			}
			w.Flush()
			us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
			for era := 0; era < 2; era++ {
				d, h := paths[2*era].st, paths[2*era+1].st
				b.ReportMetric(float64(h.p50())/float64(d.p50()), strings.Fields(paths[2*era].name)[1]+"-p50-ratio")
				b.ReportMetric(us(h.p50())-us(d.p50()), strings.Fields(paths[2*era].name)[1]+"-p50-added-µs")
				fmt.Fprintf(&sb, "%s at %d sessions: hub p50 %.2fx direct (+%.0f µs), calls/s %.2fx\n", strings.Fields(paths[2*era].name)[1], sessions,
					float64(h.p50())/float64(d.p50()), us(h.p50())-us(d.p50()), h.callsPerSec()/d.callsPerSec())
			}
			fmt.Print("\n" + sb.String())
		})
	}
}
