package hub

import (
	"math"
	"net/http"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit is auth.rate_limit: a token bucket per principal (per client
// address for anonymous requests), over every HTTP request the hub guards.
type RateLimit struct {
	Rate `yaml:",inline"`
	// Principals overrides the rate for principals by id (Principal.ID:
	// token:NAME, oauth:ISSUER#SUB, client:ISSUER#CLIENT_ID), never by a
	// bare name, which principals of different kinds may share.
	// requests_per_second: 0 there means no limit.
	Principals map[string]Rate `yaml:"principals"`
}

// Rate is a sustained rate and a burst.
type Rate struct {
	RequestsPerSecond float64 `yaml:"requests_per_second"`
	// Burst is how many requests may come at once (default: the rate, at least 1).
	Burst int `yaml:"burst"`
}

func (r Rate) burst() int {
	if r.Burst > 0 {
		return r.Burst
	}
	return max(1, int(math.Ceil(r.RequestsPerSecond)))
}

// maxBuckets bounds the buckets kept; past it, idle ones are dropped.
const maxBuckets = 10000

// rateLimiter holds one bucket per principal.
type rateLimiter struct {
	cfg     RateLimit
	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	limiter *rate.Limiter
	used    time.Time
}

func newRateLimiter(cfg *RateLimit) *rateLimiter {
	if cfg == nil || (cfg.RequestsPerSecond <= 0 && len(cfg.Principals) == 0) {
		return nil
	}
	return &rateLimiter{cfg: *cfg, buckets: map[string]*bucket{}}
}

// allow takes one request from p's bucket. When it is empty it returns how
// long until the next request would be allowed.
func (l *rateLimiter) allow(p *Principal, r *http.Request) (retryAfter time.Duration, ok bool) {
	if l == nil {
		return 0, true
	}
	limit, overridden := l.cfg.Principals[p.ID]
	if !overridden || p.Kind == PrincipalAnonymous {
		limit = l.cfg.Rate
	}
	if limit.RequestsPerSecond <= 0 {
		return 0, true
	}
	key := p.ID
	if key == "" {
		key = "ip:" + clientIP(r)
	}
	now := time.Now()
	l.mu.Lock()
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= maxBuckets {
			l.dropIdle(now)
		}
		b = &bucket{limiter: rate.NewLimiter(rate.Limit(limit.RequestsPerSecond), limit.burst())}
		l.buckets[key] = b
	}
	b.used = now
	l.mu.Unlock()
	res := b.limiter.ReserveN(now, 1)
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now)
		return wait, false
	}
	return 0, true
}

// dropIdle forgets buckets unused for a minute (a refilled bucket is the
// same as a new one), or all of them if that frees nothing.
func (l *rateLimiter) dropIdle(now time.Time) {
	for k, b := range l.buckets {
		if now.Sub(b.used) > time.Minute {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= maxBuckets {
		clear(l.buckets)
	}
}

// retryAfterSeconds is the Retry-After value for a wait: whole seconds, at least 1.
func retryAfterSeconds(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}
