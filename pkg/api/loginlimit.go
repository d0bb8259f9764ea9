package api

import (
	"math"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// LoginLimit is how many sign-in attempts (logins, invite acceptances and
// two-factor codes) one email address and one client address may make: a
// token bucket of Burst attempts that refills at Every per attempt. Buckets live in this
// process's memory: each server process counts on its own.
type LoginLimit struct {
	EmailBurst int
	EmailEvery time.Duration
	IPBurst    int
	IPEvery    time.Duration
}

// DefaultLoginLimit lets an email try 5 passwords at once, then one a
// minute, and an address 20 at once, then one every 6 seconds: enough for
// a person who mistypes, useless for guessing.
var DefaultLoginLimit = LoginLimit{EmailBurst: 5, EmailEvery: time.Minute, IPBurst: 20, IPEvery: 6 * time.Second}

// maxBuckets bounds each map of buckets; past it, full buckets (those of
// nobody who tried lately) are dropped.
const maxBuckets = 10000

// loginLimiter holds the buckets of LoginLimit.
type loginLimiter struct {
	limit LoginLimit
	now   func() time.Time
	mu    sync.Mutex
	email map[string]*rate.Limiter
	ip    map[string]*rate.Limiter
}

func newLoginLimiter(l LoginLimit, now func() time.Time) *loginLimiter {
	return &loginLimiter{limit: l, now: now, email: map[string]*rate.Limiter{}, ip: map[string]*rate.Limiter{}}
}

// allow spends one attempt of the email's bucket (none when email is "")
// and of the address's; when either is empty it spends neither and says
// how long to wait.
func (l *loginLimiter) allow(email, ip string) (time.Duration, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var rs []*rate.Reservation
	if email = strings.ToLower(strings.TrimSpace(email)); email != "" {
		rs = append(rs, bucket(l.email, email, l.limit.EmailEvery, l.limit.EmailBurst, now).ReserveN(now, 1))
	}
	rs = append(rs, bucket(l.ip, ip, l.limit.IPEvery, l.limit.IPBurst, now).ReserveN(now, 1))
	var wait time.Duration
	for _, r := range rs {
		wait = max(wait, r.DelayFrom(now))
	}
	if wait == 0 {
		return 0, true
	}
	for _, r := range rs {
		r.CancelAt(now)
	}
	return wait, false
}

// bucket is key's limiter in m, made when missing.
func bucket(m map[string]*rate.Limiter, key string, every time.Duration, burst int, now time.Time) *rate.Limiter {
	if lim, ok := m[key]; ok {
		return lim
	}
	if len(m) >= maxBuckets {
		for k, lim := range m {
			if lim.TokensAt(now) >= float64(lim.Burst()) {
				delete(m, k)
			}
		}
	}
	lim := rate.NewLimiter(rate.Every(every), burst)
	m[key] = lim
	return lim
}

// retryAfter is a wait in whole seconds, rounded up, for Retry-After.
func retryAfter(wait time.Duration) int {
	return int(math.Ceil(wait.Seconds()))
}
