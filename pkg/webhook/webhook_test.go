package webhook_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/webhook"
)

func TestSecrets(t *testing.T) {
	s, err := webhook.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, secret string
		ok           bool
	}{
		{"a generated secret is accepted", s, true},
		{"a secret without the whsec_ prefix is refused", strings.TrimPrefix(s, "whsec_"), false},
		{"a secret that is not base64 is refused", "whsec_not*base64", false},
		{"a secret of fewer than 24 bytes is refused", "whsec_c2hvcnQ=", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := webhook.SecretKey(tc.secret); (err == nil) != tc.ok {
				t.Fatalf("SecretKey: err = %v, want ok %v", err, tc.ok)
			}
		})
	}
}

func TestVerify(t *testing.T) {
	_, key := mustSecret(t)
	_, other := mustSecret(t)
	now := time.Now()
	body := []byte(`{"type":"dialog.created"}`)
	cases := []struct {
		name    string
		headers http.Header
		want    error
	}{
		{"a fresh signature verifies", webhook.Sign("evt_1", now, body, key), nil},
		{"any one of several signatures verifies", webhook.Sign("evt_1", now, body, other, key), nil},
		{"a signature by another key does not", webhook.Sign("evt_1", now, body, other), webhook.ErrBadSignature},
		{"a timestamp older than the tolerance does not", webhook.Sign("evt_1", now.Add(-6*time.Minute), body, key), webhook.ErrBadTimestamp},
		{"missing headers do not", http.Header{}, webhook.ErrNoSignature},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if err := webhook.Verify(key, tc.headers, body, now); err != tc.want {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestNextDelayFollowsTheScheduleWithJitterAndRetryAfter(t *testing.T) {
	cases := []struct {
		name       string
		attempts   int
		retryAfter time.Duration
		min, max   time.Duration
		ok         bool
	}{
		{"after the first attempt, about 5 seconds", 1, 0, 5 * time.Second, 6 * time.Second, true},
		{"after the second, about 5 minutes", 2, 0, 5 * time.Minute, 6 * time.Minute, true},
		{"after the ninth, about a day", 9, 0, 24 * time.Hour, 29 * time.Hour, true},
		{"a longer Retry-After wins", 1, time.Minute, time.Minute, time.Minute, true},
		{"a Retry-After beyond a day is capped", 2, 48 * time.Hour, 24 * time.Hour, 24 * time.Hour, true},
		{"after the tenth the schedule is spent", 10, 0, 0, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := webhook.NextDelay(webhook.Schedule, tc.attempts, tc.retryAfter)
			if ok != tc.ok || d < tc.min || d > tc.max {
				t.Fatalf("NextDelay(%d, %v) = %v, %v; want %v..%v, %v", tc.attempts, tc.retryAfter, d, ok, tc.min, tc.max, tc.ok)
			}
		})
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	cases := []struct {
		name, value string
		want        time.Duration
	}{
		{"seconds", "120", 2 * time.Minute},
		{"an HTTP date", now.Add(time.Hour).Format(http.TimeFormat), time.Hour},
		{"a date in the past", now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"nothing", "", 0},
		{"garbage", "soon", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := webhook.ParseRetryAfter(tc.value, now); got != tc.want {
				t.Fatalf("ParseRetryAfter(%q) = %v, want %v", tc.value, got, tc.want)
			}
		})
	}
}
