package store

import (
	"context"
	"errors"
	"time"
)

// Idempotency is a tenant's idempotency keys: reach it with
// Store.Tenant(id).Idempotency().
type Idempotency struct{ scope }

// IdempotencyKey remembers the first response to a request that carried an
// Idempotency-Key header, so a retry gets the same answer instead of a
// second run. Status 0 means the first request is still being answered.
type IdempotencyKey struct {
	TenantID string `gorm:"primaryKey"`
	Key      string `gorm:"primaryKey"`
	// Fingerprint is a hash of what the request asked, so the same key on
	// a different request is recognised as a client bug.
	Fingerprint string
	Status      int
	ContentType string
	Body        string
	CreatedAt   time.Time
	// Owner is the server process answering the claim: its instance on
	// PostgreSQL, its run of the server on SQLite, "" for other stores.
	Owner string
	// MessageID is the id the request stores its user message under.
	MessageID string
}

// Done reports whether the first response is stored.
func (k *IdempotencyKey) Done() bool { return k.Status != 0 }

// Claim records that the request with this key and
// fingerprint is being answered now, and returns the key's record. won
// says the caller must answer it, then Complete or Forget the key; else
// the record is done (replay it), in progress (a concurrent duplicate) or
// of another fingerprint. An unfinished claim is handed to the caller
// when its server died or released it for the same request, at once, or
// when it is older than staleAfter. The
// record's MessageID, kept when a claim is handed over, is the id under
// which the request stores its user message (Take.First).
func (i Idempotency) Claim(ctx context.Context, key, fingerprint string, now time.Time, staleAfter time.Duration) (rec *IdempotencyKey, won bool, err error) {
	s, tenantID := i.s, i.tenant
	now = now.UTC()
	rec = &IdempotencyKey{TenantID: tenantID, Key: key, Fingerprint: fingerprint, CreatedAt: now,
		Owner: s.claimOwner, MessageID: NewID(PrefixMessage)}
	n, err := s.exec(ctx, `INSERT INTO idempotency_keys (tenant_id, key, fingerprint, status, content_type, body, created_at, owner, message_id)
VALUES ($1, $2, $3, 0, '', '', $4, $5, $6) ON CONFLICT DO NOTHING`, tenantID, key, fingerprint, now, rec.Owner, rec.MessageID)
	if err != nil {
		return nil, false, wrap("claim idempotency key", err)
	}
	if n == 1 {
		return rec, true, nil
	}
	handOver := claimStaleSQL + ` OR ` + claimReleasedSQL
	switch {
	case s.instance != nil:
		handOver += ` OR ` + claimOwnerDeadSQL
	case s.serverLock != nil:
		handOver += ` OR ` + claimOwnerGoneSQL
	}
	ids, err := s.strings(ctx, `UPDATE idempotency_keys SET fingerprint = $3, created_at = $4, owner = $5
WHERE tenant_id = $1 AND key = $2 AND status = 0 AND (`+handOver+`) RETURNING message_id`,
		tenantID, key, fingerprint, now, rec.Owner, now.Add(-staleAfter))
	if err != nil {
		return nil, false, wrap("claim idempotency key", err)
	}
	if len(ids) == 1 {
		rec.MessageID = ids[0]
		return rec, true, nil
	}
	var got IdempotencyKey
	err = s.q(ctx).Where("tenant_id = ? AND key = ?", tenantID, key).First(&got).Error
	if errors.Is(wrap("", err), ErrNotFound) {
		// Forgotten between our insert and read: claim it again.
		return i.Claim(ctx, key, fingerprint, now, staleAfter)
	}
	if err != nil {
		return nil, false, wrap("claim idempotency key", err)
	}
	return &got, false, nil
}

// A claim is handed over when it is older than $6 (claimStaleSQL), or
// when its server is dead: on PostgreSQL, another instance whose lock is
// free (claimOwnerDeadSQL, as ownerDeadSQL for leases); on SQLite, the
// server holding the data directory's lock is the only one, so a claim of
// any other process is of one that is gone (claimOwnerGoneSQL). A claim
// released for a retry (Release) goes to the same request at once, on any
// server (claimReleasedSQL).
const (
	claimStaleSQL     = `created_at < $6`
	claimReleasedSQL  = `(owner = '` + claimReleased + `' AND fingerprint = $3)`
	claimOwnerDeadSQL = `CASE WHEN owner LIKE '` + instancePrefix + `%' AND owner <> $5
    THEN pg_try_advisory_xact_lock(hashtextextended(owner, 0)) ELSE false END`
	claimOwnerGoneSQL = `owner <> $5 AND owner <> '` + claimReleased + `'`
)

// Complete stores the response to replay for the key.
func (i Idempotency) Complete(ctx context.Context, key string, status int, contentType, body string) error {
	s, tenantID := i.s, i.tenant
	n, err := s.exec(ctx, `UPDATE idempotency_keys SET status = $3, content_type = $4, body = $5 WHERE tenant_id = $1 AND key = $2`,
		tenantID, key, status, contentType, body)
	if err != nil {
		return wrap("complete idempotency key", err)
	}
	if n == 0 {
		return wrap("complete idempotency key", ErrNotFound)
	}
	return nil
}

// claimReleased is the owner of a claim no server answers any more, whose
// request a retry must run again (Release).
const claimReleased = "released"

// Release gives up an unfinished claim whose request failed on the
// server's side and told its client to retry (a reply cut by the server's
// shutdown, an internal error): nothing is stored to replay, and the same
// request retried with the key is handed the claim at once, on any
// server, with its MessageID, so a user message the first try stored is
// not stored twice.
func (i Idempotency) Release(ctx context.Context, key string) error {
	s, tenantID := i.s, i.tenant
	_, err := s.exec(ctx, `UPDATE idempotency_keys SET owner = $3 WHERE tenant_id = $1 AND key = $2 AND status = 0`,
		tenantID, key, claimReleased)
	return wrap("release idempotency key", err)
}

// Forget drops an unfinished claim, so a request that never
// ran (it was refused before doing anything) can be retried with its key.
func (i Idempotency) Forget(ctx context.Context, key string) error {
	s, tenantID := i.s, i.tenant
	_, err := s.exec(ctx, `DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = $2 AND status = 0`, tenantID, key)
	return wrap("forget idempotency key", err)
}
