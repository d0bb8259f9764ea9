package httpretry_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/httpretry"
)

func TestRetryAfterParsing(t *testing.T) {
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	past := time.Now().Add(-time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name    string
		header  http.Header
		wantOK  bool
		atLeast time.Duration
		atMost  time.Duration
	}{
		{"whole seconds", http.Header{"Retry-After": {"3"}}, true, 3 * time.Second, 3 * time.Second},
		{"fractional seconds", http.Header{"Retry-After": {"0.5"}}, true, 500 * time.Millisecond, 500 * time.Millisecond},
		{"milliseconds win over seconds", http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, true, 250 * time.Millisecond, 250 * time.Millisecond},
		{"an HTTP date in the future", http.Header{"Retry-After": {future}}, true, 59 * time.Minute, time.Hour},
		{"an HTTP date in the past means now", http.Header{"Retry-After": {past}}, true, 0, 0},
		{"no header", http.Header{}, false, 0, 0},
		{"a negative number is ignored", http.Header{"Retry-After": {"-1"}}, false, 0, 0},
		{"garbage is ignored", http.Header{"Retry-After": {"soon"}}, false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := httpretry.RetryAfter(tt.header)
			if ok != tt.wantOK || got < tt.atLeast || got > tt.atMost {
				t.Fatalf("retryAfter = %v, %v; want %v in [%v, %v]", got, ok, tt.wantOK, tt.atLeast, tt.atMost)
			}
		})
	}
}

func TestBackoffGrowsWithJitterWithinBounds(t *testing.T) {
	lo, hi := 100*time.Millisecond, time.Second
	for attempt, ceiling := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 800 * time.Millisecond, time.Second, time.Second} {
		seen := map[time.Duration]bool{}
		for range 50 {
			d := httpretry.Backoff(lo, hi, attempt, nil)
			if d < ceiling/2 || d > ceiling {
				t.Fatalf("attempt %d waited %v; want within [%v, %v]", attempt, d, ceiling/2, ceiling)
			}
			seen[d] = true
		}
		if len(seen) < 2 {
			t.Fatalf("attempt %d always waits %v; want jitter", attempt, lo)
		}
	}
}

func TestBackoffWaitsWhatTheServerAsks(t *testing.T) {
	resp := &http.Response{StatusCode: 503, Header: http.Header{"Retry-After": {"7"}}}
	if d := httpretry.Backoff(time.Millisecond, time.Second, 0, resp); d != 7*time.Second {
		t.Fatalf("backoff = %v; want the server's 7s even above the maximum", d)
	}
}
