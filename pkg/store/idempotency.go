package store

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm/clause"
)

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
}

// Done reports whether the first response is stored.
func (k *IdempotencyKey) Done() bool { return k.Status != 0 }

// ClaimIdempotencyKey records that the request with this key and
// fingerprint is being answered now. It returns (nil, nil) when the caller
// won the claim and must answer, then Complete or Forget the key; otherwise
// it returns the existing record: done (replay it), in progress (a
// concurrent duplicate) or with another fingerprint. An in-progress claim
// older than staleAfter (its server died) is handed to the caller.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, tenantID, key, fingerprint string, now time.Time, staleAfter time.Duration) (*IdempotencyKey, error) {
	now = now.UTC()
	rec := IdempotencyKey{TenantID: tenantID, Key: key, Fingerprint: fingerprint, CreatedAt: now}
	res := s.w(ctx).Clauses(clause.OnConflict{DoNothing: true}).Create(&rec)
	if res.Error != nil {
		return nil, wrap("claim idempotency key", res.Error)
	}
	if res.RowsAffected == 1 {
		return nil, nil
	}
	res = s.w(ctx).Model(&IdempotencyKey{}).
		Where("tenant_id = ? AND key = ? AND status = 0 AND created_at < ?", tenantID, key, now.Add(-staleAfter)).
		Updates(map[string]any{"fingerprint": fingerprint, "created_at": now})
	if res.Error != nil {
		return nil, wrap("claim idempotency key", res.Error)
	}
	if res.RowsAffected == 1 {
		return nil, nil
	}
	var got IdempotencyKey
	err := s.q(ctx).Where("tenant_id = ? AND key = ?", tenantID, key).First(&got).Error
	if errors.Is(wrap("", err), ErrNotFound) {
		// Forgotten between our insert and read: claim it again.
		return s.ClaimIdempotencyKey(ctx, tenantID, key, fingerprint, now, staleAfter)
	}
	if err != nil {
		return nil, wrap("claim idempotency key", err)
	}
	return &got, nil
}

// CompleteIdempotencyKey stores the response to replay for the key.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, tenantID, key string, status int, contentType, body string) error {
	res := s.w(ctx).Model(&IdempotencyKey{}).Where("tenant_id = ? AND key = ?", tenantID, key).
		Updates(map[string]any{"status": status, "content_type": contentType, "body": body})
	if res.Error != nil {
		return wrap("complete idempotency key", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("complete idempotency key", ErrNotFound)
	}
	return nil
}

// ForgetIdempotencyKey drops an unfinished claim, so a request that never
// ran (it was refused before doing anything) can be retried with its key.
func (s *Store) ForgetIdempotencyKey(ctx context.Context, tenantID, key string) error {
	err := s.w(ctx).Where("tenant_id = ? AND key = ? AND status = 0", tenantID, key).Delete(&IdempotencyKey{}).Error
	return wrap("forget idempotency key", err)
}
