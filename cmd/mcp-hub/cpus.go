package main

import (
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"time"
)

// shareCPUs runs the serving hub on as few CPUs as keep up with its load,
// from one up to all of them, unless the user set GOMAXPROCS.
//
// A proxied call is a chain of hand-offs between goroutines and processes.
// With a spare P, Go wakes a sleeping core for each hand-off, and on a
// small virtual machine that costs more than the parallelism gives: on 2
// cores, one P took a call's p50 through the hub from 1.62x to 1.43x
// direct (BenchmarkProxy). Under heavy load one P is the bottleneck (200
// sessions: 860 calls/s against 1,390 with two), so the hub takes another
// CPU when its goroutines queue for the Ps it has, and gives it back when
// the load goes. Queueing is the signal rather than CPU time: on a machine
// shared with the upstreams, a saturated P may get well under a full CPU.
func shareCPUs(ctx context.Context) {
	most := runtime.GOMAXPROCS(0)
	if os.Getenv("GOMAXPROCS") != "" || most == 1 {
		return
	}
	usage, ok := cpuUsage()
	if !ok {
		return // no way to watch the load: keep every CPU
	}
	runtime.GOMAXPROCS(1)
	go func() {
		const every = time.Second
		tick := time.NewTicker(every)
		defer tick.Stop()
		last, lastUsed := time.Now(), usage()
		const calmBeforeShrinking = 5 // intervals
		calm := 0
		var queue schedQueue
		queue.waited() // from now on
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-tick.C:
				used := usage()
				busy := float64(used-lastUsed) / float64(now.Sub(last))
				last, lastUsed = now, used
				p := runtime.GOMAXPROCS(0)
				next := nextProcs(p, most, busy, queue.waited())
				// A CPU is taken at once and given back after a calm spell,
				// so that a lull in heavy load does not cost a second at one P.
				switch {
				case next > p:
					runtime.GOMAXPROCS(next)
					calm = 0
				case next < p:
					if calm++; calm >= calmBeforeShrinking {
						runtime.GOMAXPROCS(next)
						calm = 0
					}
				default:
					calm = 0
				}
			}
		}
	}()
}

// nextProcs is how many Ps to run with, given p now, at most most, busy,
// the CPUs the process used per second of the last interval, and queued,
// the share of goroutine wake-ups in it that waited over a millisecond for
// a P: one more when goroutines queue or the Ps are saturated, one fewer
// when they do not and the rest would do with room to spare.
func nextProcs(p, most int, busy, queued float64) int {
	switch {
	case (queued > 0.05 || busy > 0.8*float64(p)) && p < most:
		return p + 1
	case p > 1 && queued < 0.01 && busy < 0.4*float64(p-1):
		return p - 1
	}
	return p
}

// schedQueue reads how long goroutines waited to run, from the runtime's
// scheduling latency histogram.
type schedQueue struct {
	sample    [1]metrics.Sample
	prevTotal uint64
	prevSlow  uint64
}

// waited returns the share of wake-ups since the last call that waited
// over a millisecond.
func (q *schedQueue) waited() float64 {
	q.sample[0].Name = "/sched/latencies:seconds"
	metrics.Read(q.sample[:])
	if q.sample[0].Value.Kind() != metrics.KindFloat64Histogram {
		return 0
	}
	h := q.sample[0].Value.Float64Histogram()
	var total, slow uint64
	for i, n := range h.Counts {
		total += n
		if h.Buckets[i] >= 1e-3 {
			slow += n
		}
	}
	dTotal, dSlow := total-q.prevTotal, slow-q.prevSlow
	q.prevTotal, q.prevSlow = total, slow
	if dTotal == 0 {
		return 0
	}
	return float64(dSlow) / float64(dTotal)
}
