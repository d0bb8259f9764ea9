package dialog

import (
	"errors"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
	"time"
)

func TestKeyedLimiter(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	t.Run("a burst passes, the next request waits for its token", func(t *testing.T) {
		l := newKeyedLimiter(1, 2, 10)
		for i := range 2 {
			if l.wait("a", now) != 0 {
				t.Fatalf("request %d of the burst was refused", i+1)
			}
		}
		if w := l.wait("a", now); w <= 0 || w > time.Second {
			t.Fatalf("wait %s, want up to a second", w)
		}
		if l.wait("a", now.Add(time.Second)) != 0 {
			t.Fatal("the refilled token was refused")
		}
	})
	t.Run("keys have their own buckets", func(t *testing.T) {
		l := newKeyedLimiter(1, 1, 10)
		l.wait("a", now)
		if l.wait("b", now) != 0 {
			t.Fatal("b paid for a")
		}
	})
	t.Run("a refused request does not use up a token", func(t *testing.T) {
		l := newKeyedLimiter(1, 1, 10)
		l.wait("a", now)
		for range 5 {
			l.wait("a", now.Add(500*time.Millisecond))
		}
		if l.wait("a", now.Add(time.Second)) != 0 {
			t.Fatal("refusals pushed the next token out")
		}
	})
	t.Run("a token given back is there for the next request", func(t *testing.T) {
		l := newKeyedLimiter(1, 1, 10)
		_, giveBack := l.take("a", now)
		giveBack() // another limit refused the request
		if l.wait("a", now) != 0 {
			t.Fatal("the given-back token was not there")
		}
	})
	t.Run("the map stays bounded by forgetting the least recently seen", func(t *testing.T) {
		l := newKeyedLimiter(1, 1, 2)
		l.wait("old", now)
		l.wait("new", now.Add(time.Millisecond))
		l.wait("newer", now.Add(2*time.Millisecond))
		if len(l.buckets) != 2 || l.buckets["old"] != nil {
			t.Fatalf("buckets %v", l.buckets)
		}
	})
	t.Run("no rate means no limit", func(t *testing.T) {
		var l *keyedLimiter = newKeyedLimiter(0, 0, 10)
		for range 100 {
			if l.wait("a", now) != 0 {
				t.Fatal("refused without a rate")
			}
		}
	})
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		err  error
		want time.Duration
	}{
		{"a short wait rounds up to a second", rateLimited(10*time.Millisecond, "slow down"), time.Second},
		{"a fractional wait rounds up", rateLimited(1500*time.Millisecond, "slow down"), 2 * time.Second},
		{"a wrapped rate limit keeps its wait", errors.Join(errors.New("ctx"), rateLimited(3*time.Second, "x")), 3 * time.Second},
		{"other errors ask for no wait", platform.Errorf(platform.CodeConflict, "busy"), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := RetryAfter(tc.err); got != tc.want {
				t.Fatalf("RetryAfter = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestUntilTomorrowIsTheRestOfTheUTCDay(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 1, 23, 0, 0, 0, time.FixedZone("CET", 3600)) // 22:00 UTC
	if got := untilTomorrow(at); got != 2*time.Hour {
		t.Fatalf("until tomorrow = %s", got)
	}
}
