package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// SSO is a tenant's own OpenID Connect provider: reach it with
// Store.Tenant(id).SSO().
type SSO struct{ scope }

// OIDCLogins are single sign-ons under way: Store.OIDCLogins().
// Cross-tenant: the callback knows only the state, not the tenant.
type OIDCLogins struct{ s *Store }

// TenantSSO is a tenant's single sign-on settings: the issuer, the client
// id and its secret sealed by the caller (Nonce, Ciphertext), the role
// just-in-time members get ("" admits only existing members), the email
// domains just-in-time membership admits (a JSON array) and whether
// members must sign in through the provider.
type TenantSSO struct {
	TenantID       string `gorm:"primaryKey"`
	Issuer         string
	ClientID       string
	Nonce          []byte
	Ciphertext     []byte
	DefaultRole    string
	AllowedDomains string
	RequireSSO     bool `gorm:"column:require_sso"`
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// TableName is tenant_sso.
func (TenantSSO) TableName() string { return "tenant_sso" }

// Put creates or replaces the tenant's single sign-on settings.
func (x SSO) Put(ctx context.Context, t *TenantSSO) error {
	s := x.s
	t.TenantID = x.tenant
	now := s.db.NowFunc()
	t.CreatedAt, t.UpdatedAt = now, now
	if t.AllowedDomains == "" {
		t.AllowedDomains = "[]"
	}
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns: []clause.Column{{Name: "tenant_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"issuer", "client_id", "nonce", "ciphertext", "default_role",
			"allowed_domains", "require_sso", "updated_at"}),
	}).Create(t).Error
	return wrap("put tenant sso", err)
}

// Get returns the tenant's single sign-on settings; ErrNotFound when it
// has none.
func (x SSO) Get(ctx context.Context) (TenantSSO, error) {
	s, tenantID := x.s, x.tenant
	var t TenantSSO
	err := s.q(ctx).Where("tenant_id = ?", tenantID).Take(&t).Error
	return t, wrap("get tenant sso", err)
}

// Delete removes the tenant's single sign-on settings; none is
// ErrNotFound.
func (x SSO) Delete(ctx context.Context) error {
	s, tenantID := x.s, x.tenant
	res := s.q(ctx).Where("tenant_id = ?", tenantID).Delete(&TenantSSO{})
	if res.Error != nil {
		return wrap("delete tenant sso", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("delete tenant sso", ErrNotFound)
	}
	return nil
}

// RequiringSSO returns which of these tenants require single sign-on.
func (us Users) RequiringSSO(ctx context.Context, tenantIDs []string) ([]string, error) {
	s := us.s
	var ids []string
	if len(tenantIDs) == 0 {
		return ids, nil
	}
	err := s.q(ctx).Model(&TenantSSO{}).Where("tenant_id IN ? AND require_sso", tenantIDs).Order("tenant_id").Pluck("tenant_id", &ids).Error
	return ids, wrap("tenants requiring sso", err)
}

// SetSSOBypass lets the user sign in with a password until then, even
// where a tenant requires single sign-on (break-glass).
func (us Users) SetSSOBypass(ctx context.Context, userID string, until time.Time) error {
	s := us.s
	res := s.q(ctx).Model(&User{}).Where("id = ?", userID).Update("sso_bypass_until", until)
	if res.Error != nil {
		return wrap("set sso bypass", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("set sso bypass", ErrNotFound)
	}
	return nil
}

// OIDCLogin is one single sign-on under way: the hash of its state, the
// tenant whose provider it goes to ("" for the operator's), the nonce the
// ID token must carry and the PKCE verifier of the code exchange.
type OIDCLogin struct {
	StateHash string `gorm:"primaryKey"`
	TenantID  string
	Nonce     string
	Verifier  string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// TableName is oidc_logins.
func (OIDCLogin) TableName() string { return "oidc_logins" }

// Create records a sign-in under way, pruning ones that expired.
func (o OIDCLogins) Create(ctx context.Context, l *OIDCLogin) error {
	s := o.s
	if err := s.q(ctx).Where("expires_at <= ?", s.db.NowFunc()).Delete(&OIDCLogin{}).Error; err != nil {
		return wrap("prune oidc logins", err)
	}
	return wrap("create oidc login", s.q(ctx).Create(l).Error)
}

// Take returns the sign-in with this state hash and deletes it, so a state
// is used once even by two callbacks racing; an unknown, used or expired
// state is ErrNotFound.
func (o OIDCLogins) Take(ctx context.Context, stateHash string, now time.Time) (*OIDCLogin, error) {
	s := o.s
	var l OIDCLogin
	if err := s.q(ctx).Where("state_hash = ?", stateHash).Take(&l).Error; err != nil {
		return nil, wrap("take oidc login", err)
	}
	res := s.q(ctx).Where("state_hash = ?", stateHash).Delete(&OIDCLogin{})
	if res.Error != nil {
		return nil, wrap("take oidc login", res.Error)
	}
	if res.RowsAffected == 0 || !l.ExpiresAt.After(now) {
		return nil, wrap("take oidc login", ErrNotFound)
	}
	return &l, nil
}
