package gateway

import (
	"container/list"
	"hash/maphash"
	"math"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
)

// The buckets of a limiter are kept for at most maxBuckets keys. A new key
// past that takes the place of a bucket that has refilled (forgetting it
// loses nothing: a new bucket starts full), found among the evictScan least
// recently used. When none has, the table is flooded (many addresses at
// once): a new key shares one of overflowBuckets buckets (at the rate of
// the first key to use it), picked by a hash seeded per limiter, until a
// kept bucket refills. No kept bucket is ever
// dropped before it has refilled, so no flood of addresses resets anyone's
// limit.
const (
	maxBuckets      = 10000
	evictScan       = 64
	overflowBuckets = 1024
)

// Failed authentication is limited per client address, whatever
// auth.rate_limit says: maxAuthFailures a minute (and at once). Past it,
// requests from the address get 429 without their token being looked at.
const maxAuthFailures = 20

// rateLimiter holds one bucket per principal.
type rateLimiter struct {
	cfg     config.RateLimit
	buckets *bucketTable
}

func newRateLimiter(cfg *config.RateLimit) *rateLimiter {
	if cfg == nil || (cfg.RequestsPerSecond <= 0 && len(cfg.Principals) == 0) {
		return nil
	}
	l := &rateLimiter{cfg: *cfg, buckets: newBucketTable(maxBuckets)}
	l.cfg.Principals = make(map[string]config.Rate, len(cfg.Principals))
	for id, rate := range cfg.Principals {
		if !config.IsPrincipalID(id) {
			id = config.TokenIDPrefix + id
		}
		l.cfg.Principals[id] = rate
	}
	return l
}

// allow takes n requests (a JSON-RPC batch of n counts n) from p's bucket.
// When it holds fewer it takes none and returns how long until it would
// hold n, or never (a negative wait) when n is more than its burst.
func (l *rateLimiter) allow(p *hub.Principal, r *http.Request, n int) (retryAfter time.Duration, ok bool) {
	if l == nil {
		return 0, true
	}
	limit, overridden := l.cfg.Principals[p.ID]
	if !overridden || p.Kind == hub.PrincipalAnonymous {
		limit = l.cfg.Rate
	}
	if limit.RequestsPerSecond <= 0 {
		return 0, true
	}
	key := p.ID
	if key == "" {
		key = "ip:" + addressKey(r)
	}
	now := time.Now()
	res := l.buckets.get(key, limit, now).ReserveN(now, n)
	if !res.OK() {
		return -1, false
	}
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now)
		return wait, false
	}
	return 0, true
}

// failureLimiter counts failed authentications per client address.
type failureLimiter struct {
	buckets *bucketTable
}

func newFailureLimiter() *failureLimiter {
	return &failureLimiter{buckets: newBucketTable(maxBuckets)}
}

// blocked reports whether r's address is past maxAuthFailures, and for how
// long. It takes nothing, and remembers no address that has not failed.
func (f *failureLimiter) blocked(r *http.Request) (time.Duration, bool) {
	if f == nil {
		return 0, false
	}
	now := time.Now()
	lim := f.buckets.find(addressKey(r))
	if lim == nil {
		return 0, false
	}
	if tokens := lim.TokensAt(now); tokens < 1 {
		return time.Duration((1 - tokens) / float64(lim.Limit()) * float64(time.Second)), true
	}
	return 0, false
}

// failed counts a failed authentication from r's address.
func (f *failureLimiter) failed(r *http.Request) {
	if f == nil {
		return
	}
	now := time.Now()
	f.buckets.get(addressKey(r), config.Rate{RequestsPerSecond: maxAuthFailures / 60.0, Burst: maxAuthFailures}, now).AllowN(now, 1)
}

// addressKey is the client address a limit goes by: the connection's IP
// address (X-Forwarded-For is not trusted), an IPv6 address by its /64,
// which one client is commonly given whole.
func addressKey(r *http.Request) string {
	host := clientIP(r)
	if ip, err := netip.ParseAddr(host); err == nil && ip.Is6() && !ip.Is4In6() {
		if p, err := ip.Prefix(64); err == nil {
			return p.String()
		}
	}
	return host
}

// bucketTable is a bounded set of token buckets by key (see maxBuckets).
type bucketTable struct {
	max      int
	mu       sync.Mutex
	index    map[string]*list.Element // of *bucket
	lru      list.List                // most recently used first
	overflow [overflowBuckets]*rate.Limiter
	seed     maphash.Seed
}

type bucket struct {
	key     string
	limiter *rate.Limiter
}

func newBucketTable(max int) *bucketTable {
	return &bucketTable{max: max, index: map[string]*list.Element{}, seed: maphash.MakeSeed()}
}

// find returns key's bucket (its own, or the overflow bucket it would
// share), or nil when it has none.
func (t *bucketTable) find(key string) *rate.Limiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.index[key]; e != nil {
		return e.Value.(*bucket).limiter
	}
	return t.overflow[maphash.String(t.seed, key)%overflowBuckets]
}

// get returns key's bucket, making one of limit if need be.
func (t *bucketTable) get(key string, limit config.Rate, now time.Time) *rate.Limiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.index[key]; e != nil {
		t.lru.MoveToFront(e)
		return e.Value.(*bucket).limiter
	}
	if t.lru.Len() >= t.max && !t.evictRefilled(now) {
		i := maphash.String(t.seed, key) % overflowBuckets
		if t.overflow[i] == nil {
			t.overflow[i] = rate.NewLimiter(rate.Limit(limit.RequestsPerSecond), limit.BurstSize())
		}
		return t.overflow[i]
	}
	b := &bucket{key: key, limiter: rate.NewLimiter(rate.Limit(limit.RequestsPerSecond), limit.BurstSize())}
	t.index[key] = t.lru.PushFront(b)
	return b.limiter
}

// evictRefilled drops a bucket that has refilled, of the evictScan least
// recently used, and reports whether it found one.
func (t *bucketTable) evictRefilled(now time.Time) bool {
	e := t.lru.Back()
	for range evictScan {
		if e == nil {
			return false
		}
		b := e.Value.(*bucket)
		if b.limiter.TokensAt(now) >= float64(b.limiter.Burst()) {
			t.lru.Remove(e)
			delete(t.index, b.key)
			return true
		}
		e = e.Prev()
	}
	return false
}

// retryAfterSeconds is the Retry-After value for a wait: whole seconds, at least 1.
func retryAfterSeconds(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}
