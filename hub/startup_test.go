package hub

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// BenchmarkStartup20 measures how long a hub with 20 stdio upstreams takes
// to be ready, against the slowest of them started alone (issue: at most
// 1.5x). Each fixture server sleeps 100-480 ms before serving, like real
// servers that load a runtime first.
//
//	go test -run XXX -bench Startup20 -benchtime 3x ./hub/
func BenchmarkStartup20(b *testing.B) {
	bin := fixture.Build(b)
	const n = 20
	delay := func(i int) time.Duration { return 100*time.Millisecond + time.Duration(i)*20*time.Millisecond }
	configOf := func(servers ...int) *config.Config {
		cfg := &config.Config{Path: "bench", Servers: map[string]*config.Server{}}
		for _, i := range servers {
			name := fmt.Sprintf("s%02d", i)
			cfg.Servers[name] = &config.Server{Upstream: config.Upstream{Name: name, Command: bin,
				Args: []string{"-name", name, "-tools", "echo,ping", "-start-delay", delay(i).String()}}}
			cfg.ServerOrder = append(cfg.ServerOrder, name)
		}
		return cfg
	}
	ready := func(cfg *config.Config) time.Duration {
		start := time.Now()
		h, err := New(context.Background(), cfg, Options{StartupWait: 30 * time.Second, Logger: slog.New(slog.DiscardHandler), Builtin: builtins(cfg, quietLogger)})
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		if got := len(h.Catalog().Tools); got != 2*len(cfg.ServerOrder) {
			b.Fatalf("%d tools ready, want %d", got, 2*len(cfg.ServerOrder))
		}
		h.Close()
		return took
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	var single, many time.Duration
	for b.Loop() {
		single += ready(configOf(n - 1))
		many += ready(configOf(all...))
	}
	b.ReportMetric(float64(single.Milliseconds())/float64(b.N), "slowest-alone-ms")
	b.ReportMetric(float64(many.Milliseconds())/float64(b.N), "all-20-ms")
	b.ReportMetric(float64(many)/float64(single), "ratio")
}
