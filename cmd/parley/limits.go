package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Bounds of PARLEY_DIALOG_LEASE_TTL. Below a second, a loaded server
// renewing every third of the TTL would lose dialogs it is still
// answering; above an hour, a hung server would silence a dialog for too
// long. (A server that dies holds nothing: see store.Abandoned.Settle and
// store.Instance.)
const (
	minLeaseTTL = time.Second
	maxLeaseTTL = time.Hour
)

// loadLimits parses the rate limit, stream, quota, Redis and lease
// settings into s.
func (s *Settings) loadLimits(get func(string) string) error {
	var err error
	if s.Limits.TenantRate, s.Limits.TenantBurst, err = parseRate(get("PARLEY_RATE_LIMIT_TENANT")); err != nil {
		return fmt.Errorf("PARLEY_RATE_LIMIT_TENANT: %w", err)
	}
	if s.Limits.KeyRate, s.Limits.KeyBurst, err = parseRate(get("PARLEY_RATE_LIMIT_KEY")); err != nil {
		return fmt.Errorf("PARLEY_RATE_LIMIT_KEY: %w", err)
	}
	if s.Limits.DailyTokens, err = parseTokens(get("PARLEY_DAILY_TOKEN_QUOTA")); err != nil {
		return fmt.Errorf("PARLEY_DAILY_TOKEN_QUOTA: %w", err)
	}
	v := get("PARLEY_STREAM_LIMIT_TENANT")
	if s.Limits.TenantStreams, err = strconv.Atoi(v); err != nil || s.Limits.TenantStreams < 0 {
		return fmt.Errorf("PARLEY_STREAM_LIMIT_TENANT: %q is not a number of replies (0 for no limit)", v)
	}
	if s.RedisURL = get("PARLEY_REDIS_URL"); s.RedisURL != "" && !strings.HasPrefix(s.RedisURL, "redis://") && !strings.HasPrefix(s.RedisURL, "rediss://") {
		// Never the value: it may hold a password.
		return fmt.Errorf("PARLEY_REDIS_URL: must start with redis:// or rediss://")
	}
	switch v := strings.ToLower(get("PARLEY_REDIS_FAIL")); v {
	case "open", "closed":
		s.RedisFailClosed = v == "closed"
	default:
		return fmt.Errorf("PARLEY_REDIS_FAIL: %q is not open or closed", v)
	}
	v = get("PARLEY_DIALOG_LEASE_TTL")
	if s.LeaseTTL, err = time.ParseDuration(v); err != nil || s.LeaseTTL < minLeaseTTL || s.LeaseTTL > maxLeaseTTL {
		return fmt.Errorf("PARLEY_DIALOG_LEASE_TTL: %q is not a duration from %s to %s, like 30s or 2m", v, minLeaseTTL, maxLeaseTTL)
	}
	return nil
}

// rateUnits are the windows a rate may be counted in.
var rateUnits = map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}

// parseRate reads "N/s", "N/m" or "N/h" with an optional ",burst=B" into
// requests per second and a burst; "off" and "0" are no limit (0, 0).
// Without a burst, one second's worth is allowed at once, at least one
// request, so "1200/m" and "20/s" mean the same.
func parseRate(v string) (perSecond float64, burst int, err error) {
	v = strings.ToLower(strings.ReplaceAll(v, " ", ""))
	if v == "off" || v == "0" {
		return 0, 0, nil
	}
	bad := fmt.Errorf("%q is not a rate like 20/s, 1200/m or 20/s,burst=40 (or off)", v)
	ratePart, burstPart, hasBurst := strings.Cut(v, ",")
	count, unit, ok := strings.Cut(ratePart, "/")
	per, known := rateUnits[unit]
	n, convErr := strconv.ParseFloat(count, 64)
	if !ok || !known || convErr != nil || n <= 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return 0, 0, bad
	}
	perSecond = n / per.Seconds()
	burst = max(1, int(math.Ceil(perSecond)))
	if hasBurst {
		b, ok := strings.CutPrefix(burstPart, "burst=")
		if burst, convErr = strconv.Atoi(b); !ok || convErr != nil || burst < 1 {
			return 0, 0, bad
		}
	}
	return perSecond, burst, nil
}

// tokenSuffixes are the multipliers a token count may end with.
var tokenSuffixes = map[string]int64{"k": 1_000, "m": 1_000_000, "g": 1_000_000_000}

// parseTokens reads a token count, optionally ending in k, M or G; 0 is
// unlimited.
func parseTokens(v string) (int64, error) {
	mult := int64(1)
	lower := strings.ToLower(v)
	if m, ok := tokenSuffixes[lower[max(0, len(lower)-1):]]; ok {
		mult, lower = m, lower[:len(lower)-1]
	}
	n, err := strconv.ParseInt(lower, 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a token count like 2000000, 500k or 2M (0 for unlimited)", v)
	}
	return n * mult, nil
}
