// Package redislimit counts rate limits, concurrent streams and daily
// tokens in Redis, so every server sharing one Redis enforces them
// together (PARLEY_REDIS_URL, docs/deploy.md).
//
// One Lua script admits a request in one round trip: the key's and the
// tenant's rates (GCRA), the tenant's daily tokens, and a lease on one of
// the tenant's concurrent streams. What happens after the request —
// tokens a model call used, a stream that ended, streams still running —
// waits in memory and is written for every request of the process at
// once, in one pipeline every FlushEvery, so a message costs at most one
// round trip of its own.
//
// The Limiter knows nothing of tenants beyond the strings it is given,
// and holds only counters: no dialog, message or secret reaches Redis.
// When Redis does not answer, Admit returns ErrUnavailable at once and a
// probe tries again every second; the caller decides what to count
// instead (pkg/dialog falls back to per-process limits, or refuses).
//
//	l, err := redislimit.Open(url, redislimit.Options{Logger: log, Metrics: reg})
//	go l.Run(ctx)
//	d, err := l.Admit(ctx, redislimit.Request{...})
package redislimit
