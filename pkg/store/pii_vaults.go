package store

import (
	"context"
	"time"
)

// PIIVaults are the tenant's dialogs' personal data vaults: reach them
// with Store.Tenant(id).PIIVaults(). A vault holds the values a dialog's
// placeholders (<EMAIL_1>) stand for, sealed by the caller (pkg/auth.Sealer)
// before it reaches the store. It goes with its dialog (Dialogs.Delete,
// retention, end-user erasure).
type PIIVaults struct{ scope }

// PIIVault is one dialog's sealed vault.
type PIIVault struct {
	TenantID   string
	DialogID   string `gorm:"primaryKey"`
	Version    int64
	Nonce      []byte
	Ciphertext []byte
	UpdatedAt  time.Time
}

// TableName implements gorm's Tabler.
func (PIIVault) TableName() string { return "pii_vaults" }

// Get returns the dialog's vault; ErrNotFound when it has none.
func (pv PIIVaults) Get(ctx context.Context, dialogID string) (*PIIVault, error) {
	var v PIIVault
	err := pv.s.q(ctx).Where("tenant_id = ? AND dialog_id = ?", pv.tenant, dialogID).First(&v).Error
	if err != nil {
		return nil, wrap("get pii vault", err)
	}
	return &v, nil
}

// Put writes v over the version the writer read (0: none yet), and
// advances v.Version. When another writer wrote first it is ErrConflict:
// read the vault again and redo the change. A dialog the tenant does not
// have is ErrNotFound.
func (pv PIIVaults) Put(ctx context.Context, v *PIIVault) error {
	s := pv.s
	v.TenantID = pv.tenant
	v.UpdatedAt = s.db.NowFunc().UTC()
	read := v.Version
	v.Version = read + 1
	var n int64
	var err error
	if read == 0 {
		// Only for a dialog of the tenant: another tenant's dialog is
		// not found, never given a vault it could not read.
		res := s.q(ctx).Exec(`INSERT INTO pii_vaults (dialog_id, tenant_id, version, nonce, ciphertext, updated_at)
SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM dialogs WHERE tenant_id = ? AND id = ?)`,
			v.DialogID, pv.tenant, v.Version, v.Nonce, v.Ciphertext, v.UpdatedAt, pv.tenant, v.DialogID)
		n, err = res.RowsAffected, res.Error
		if err == nil && n == 0 {
			err = ErrNotFound
		}
	} else {
		res := s.q(ctx).Model(&PIIVault{}).Where("tenant_id = ? AND dialog_id = ? AND version = ?", pv.tenant, v.DialogID, read).
			UpdateColumns(map[string]any{"version": v.Version, "nonce": v.Nonce, "ciphertext": v.Ciphertext, "updated_at": v.UpdatedAt})
		n, err = res.RowsAffected, res.Error
		if err == nil && n == 0 {
			err = ErrConflict
		}
	}
	if err != nil {
		v.Version = read
	}
	return wrap("put pii vault", err)
}
