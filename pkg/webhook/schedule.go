package webhook

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Schedule is the Standard Webhooks retry schedule: the delay before each
// attempt, the first immediate. After the last attempt fails the delivery
// has failed for good. Ten attempts over about three days and a half.
var Schedule = []time.Duration{
	0, 5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour,
	5 * time.Hour, 10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour,
}

// maxRetryAfter caps how long a receiver's Retry-After may hold a
// delivery back: no longer than the schedule's longest step.
const maxRetryAfter = 24 * time.Hour

// NextDelay returns how long to wait before the attempt after attempts
// (1 after the first), with up to a fifth more as jitter so a receiver
// that comes back is not hit by every waiting delivery at once, and at
// least retryAfter. ok is false when the schedule is spent.
func NextDelay(schedule []time.Duration, attempts int, retryAfter time.Duration) (time.Duration, bool) {
	if attempts >= len(schedule) {
		return 0, false
	}
	d := schedule[attempts]
	if d > 0 {
		d += time.Duration(rand.Int64N(int64(d)/5 + 1))
	}
	return max(d, min(retryAfter, maxRetryAfter)), true
}

// ParseRetryAfter reads a Retry-After header: seconds or an HTTP date. It
// returns 0 when there is none or it cannot be read.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
