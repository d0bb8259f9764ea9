package platform

import (
	"context"
	"errors"

	"github.com/parleyhq/parley/pkg/store"
)

// PIIVaults is the sealed personal data behind a dialog's placeholders: reach it with Service.PIIVaults().
type PIIVaults struct{ svc *Service }

// PIIVaults returns the sealed personal data behind a dialog's placeholders.
func (s *Service) PIIVaults() PIIVaults { return PIIVaults{s} }

// ErrVaultChanged means another writer saved a dialog's personal data
// vault after the caller read it: read it again and redo the change.
var ErrVaultChanged = errors.New("platform: the dialog's vault changed meanwhile")

// vaultSecretName binds a vault's ciphertext to its dialog, so one
// dialog's sealed vault cannot be passed off as another's.
func vaultSecretName(dialogID string) string { return "pii_vault:" + dialogID }

// Of returns the dialog's personal data vault (the values behind
// its placeholders, as pkg/pii marshals them), opened, and the version to
// save over; nil and 0 when it has none. Like SecretVars it takes no
// Principal: it is for the dialog runner only.
func (p PIIVaults) Of(ctx context.Context, tenantID, dialogID string) ([]byte, int64, error) {
	s := p.svc
	v, err := s.store.Tenant(tenantID).PIIVaults().Get(ctx, dialogID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, s.internal(ctx, "dialog vault", err)
	}
	plain, err := s.opts.Sealer.Open(tenantID, vaultSecretName(dialogID), v.Nonce, v.Ciphertext)
	if err != nil {
		return nil, 0, s.internal(ctx, "dialog vault: open", errors.Join(err, errors.New("was PARLEY_SECRET_KEY changed?")))
	}
	return plain, v.Version, nil
}

// Save seals plain and writes it over version (0: the first
// save), returning the new version. ErrVaultChanged when another writer
// saved first.
func (p PIIVaults) Save(ctx context.Context, tenantID, dialogID string, version int64, plain []byte) (int64, error) {
	s := p.svc
	nonce, ct, err := s.opts.Sealer.Seal(tenantID, vaultSecretName(dialogID), plain)
	if err != nil {
		return 0, s.internal(ctx, "dialog vault: seal", err)
	}
	v := &store.PIIVault{DialogID: dialogID, Version: version, Nonce: nonce, Ciphertext: ct}
	err = s.store.Tenant(tenantID).PIIVaults().Put(ctx, v)
	switch {
	case errors.Is(err, store.ErrConflict):
		return 0, ErrVaultChanged
	case err != nil:
		return 0, s.storeErr(ctx, "dialog vault: save", "dialog", "", err) // a dialog deleted meanwhile is not_found
	}
	return v.Version, nil
}
