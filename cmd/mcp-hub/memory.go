package main

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/mcp-hub/mcp-hub/gateway"
)

// returnIdleMemory gives freed memory back to the OS when the HTTP hub
// goes quiet after work. With GOGC=400 (tuneGC) a burst, say thousands of
// sessions opened and abandoned, or thousands of connections, leaves the
// heap several times larger than what stays live once they are gone; an
// idle process runs no collection to find that out for two minutes, and
// the runtime's background scavenger then returns the memory over minutes
// more (measured: 300 MB at about 1.5 MB/s). So once the hub has had no
// request, and no session ended, for 10 s, it collects and returns what is
// free, once per quiet spell. A busy hub keeps its memory, and GOGC's
// trade of memory for latency.
func returnIdleMemory(ctx context.Context, h *gateway.Gateway, log *slog.Logger) {
	const (
		quiet = 10 * time.Second
		// A smaller heap is not worth a collection. 1,000 idle sessions
		// make a heap of about 50 MiB, most of it free: 64 MiB kept that.
		minHeap = 16 << 20
	)
	go func() {
		tick := time.NewTicker(quiet / 2)
		defer tick.Stop()
		heap := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
		// Start-up counts as work: it leaves its garbage (config, schemas,
		// the search index's build) in a heap grown at GOGC=400, and a hub
		// that gets no request would otherwise keep it. That first time the
		// heap is returned whatever its size.
		started := time.Now()
		var returned time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			last := h.LastActivity()
			if last.IsZero() {
				last = started
			}
			if !last.After(returned) || time.Since(last) < quiet {
				continue
			}
			first := returned.IsZero()
			returned = time.Now()
			metrics.Read(heap)
			size := heap[0].Value.Uint64() + heap[1].Value.Uint64()
			if size < minHeap && !first {
				continue
			}
			// Two collections: sync.Pool (net/http's buffers, say) keeps
			// its objects through one.
			runtime.GC()
			debug.FreeOSMemory()
			log.Debug("quiet: returned freed memory to the OS", "heap_before", size)
			if first {
				// Once: the program's pages touched only to start.
				if n, err := returnProgramPages(); err != nil {
					log.Debug("quiet: could not return the program's pages", "err", err)
				} else if n > 0 {
					log.Debug("quiet: returned the program's start-up pages", "mapped", n)
				}
			}
		}
	}()
}
