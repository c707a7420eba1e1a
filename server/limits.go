package server

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// limiter keeps a token bucket per key (a token or an address), forgetting
// keys idle for ten minutes so that many clients cannot grow it for ever.
type limiter struct {
	ip, principal *buckets
}

type buckets struct {
	mu    sync.Mutex
	rate  rate.Limit
	burst int
	off   bool
	m     map[string]*bucket
	sweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	seen time.Time
}

func newLimiter(o Options) *limiter {
	mk := func(r float64, b int) *buckets {
		return &buckets{rate: rate.Limit(r), burst: b, off: r < 0, m: map[string]*bucket{}, sweep: time.Now()}
	}
	return &limiter{ip: mk(o.IPRate, o.IPBurst), principal: mk(o.Rate, o.Burst)}
}

const (
	idleBucket = 10 * time.Minute
	maxBuckets = 100_000
)

// ipKey is the limit key of an address: an IPv6 client's /64, since one
// holds a whole /64 to cycle through.
func ipKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Unmap().Is4() {
		return "ip:" + ip
	}
	p, _ := a.Prefix(64)
	return "ip:" + p.String()
}

// allow takes one request from key's bucket; when it is empty it says how
// long until one is free.
func (l *limiter) allow(key string, b *buckets) (time.Duration, bool) {
	if b.off {
		return 0, true
	}
	now := time.Now()
	b.mu.Lock()
	if now.Sub(b.sweep) > time.Minute {
		for k, v := range b.m {
			if now.Sub(v.seen) > idleBucket {
				delete(b.m, k)
			}
		}
		b.sweep = now
	}
	e := b.m[key]
	if e == nil && len(b.m) >= maxBuckets {
		b.mu.Unlock()
		return time.Second, false // shed load rather than grow without end
	}
	if e == nil {
		e = &bucket{lim: rate.NewLimiter(b.rate, b.burst)}
		b.m[key] = e
	}
	e.seen = now
	b.mu.Unlock()
	res := e.lim.ReserveN(now, 1)
	if !res.OK() {
		return time.Second, false
	}
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return d, false
	}
	return 0, true
}
