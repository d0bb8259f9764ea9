package dialog

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// IdempotencyKeys is the Idempotency-Key records of message requests: reach it with Runtime.IdempotencyKeys().
type IdempotencyKeys struct{ rt *Runtime }

// IdempotencyKeys returns the Idempotency-Key records of message requests.
func (r *Runtime) IdempotencyKeys() IdempotencyKeys { return IdempotencyKeys{r} }

// idempotencyStale is how long an unfinished Idempotency-Key claim blocks
// retries when its server hangs: longer than any run. A server that died
// holds none (see store.Idempotency.Claim).
const idempotencyStale = 15 * time.Minute

// Replay is the stored first response to an Idempotency-Key.
type Replay struct {
	Status      int
	ContentType string
	Body        string
}

// Claim starts answering a request that carries an
// Idempotency-Key. It returns no Replay when the caller must answer it
// (then Complete, Release or Forget), with the id
// under which the request stores its text (SendInput.MessageID): kept
// when a claim whose server died is handed over, so the retry never
// stores the text twice. Otherwise it returns the stored response to
// replay for a retry, a conflict (with Retry-After) while the first
// request is still being answered, and invalid when the key was used for
// another request. fingerprint identifies the request; the caller's
// identity is mixed in so one key can never replay another's response.
func (i IdempotencyKeys) Claim(ctx context.Context, p *platform.Principal, tenant, key, fingerprint string) (*Replay, string, error) {
	r := i.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActChat)
	if err != nil {
		return nil, "", err
	}
	if len(key) == 0 || len(key) > 255 {
		return nil, "", platform.Invalid(platform.Detail{Pointer: "/headers/Idempotency-Key", Message: "must be 1-255 characters"})
	}
	fp := hashHex(p.Actor() + "\x00" + fingerprint)
	rec, won, err := r.store.Tenant(tenantID).Idempotency().Claim(ctx, key, fp, r.now(), idempotencyStale)
	switch {
	case err != nil:
		return nil, "", r.internal(ctx, "claim idempotency key", err)
	case won:
		return nil, rec.MessageID, nil
	case rec.Fingerprint != fp:
		return nil, "", platform.Invalid(platform.Detail{Pointer: "/headers/Idempotency-Key", Message: "was already used for a different request"})
	case !rec.Done():
		return nil, "", busy("a request with this Idempotency-Key is still being answered")
	}
	return &Replay{Status: rec.Status, ContentType: rec.ContentType, Body: rec.Body}, "", nil
}

// Complete stores the response to replay for the key.
func (i IdempotencyKeys) Complete(ctx context.Context, p *platform.Principal, tenant, key string, resp Replay) error {
	return i.update(ctx, p, tenant, "complete idempotency key", func(keys store.Idempotency) error {
		return keys.Complete(ctx, key, resp.Status, resp.ContentType, resp.Body)
	})
}

// Release gives up an unfinished claim whose request failed on the
// server's side and said to retry: nothing is recorded to replay, and the
// same request retried with the key runs on any server at once, storing
// its text under the same id, so never twice.
func (i IdempotencyKeys) Release(ctx context.Context, p *platform.Principal, tenant, key string) error {
	return i.update(ctx, p, tenant, "release idempotency key", func(keys store.Idempotency) error {
		return keys.Release(ctx, key)
	})
}

// Forget drops an unfinished claim, for requests refused
// before they changed anything, so a retry is answered afresh.
func (i IdempotencyKeys) Forget(ctx context.Context, p *platform.Principal, tenant, key string) error {
	return i.update(ctx, p, tenant, "forget idempotency key", func(keys store.Idempotency) error {
		return keys.Forget(ctx, key)
	})
}

// update settles a claim of the tenant's, once p may chat there.
func (i IdempotencyKeys) update(ctx context.Context, p *platform.Principal, tenant, what string, fn func(store.Idempotency) error) error {
	tenantID, err := i.rt.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActChat)
	if err != nil {
		return err
	}
	if err := fn(i.rt.store.Tenant(tenantID).Idempotency()); err != nil {
		return i.rt.internal(ctx, what, err)
	}
	return nil
}

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}
