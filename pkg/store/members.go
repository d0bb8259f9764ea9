package store

import (
	"context"
	"time"

	"gorm.io/gorm/clause"
)

// Members are a tenant's memberships and invites: reach them with
// Store.Tenant(id).Members().
type Members struct{ scope }

// Invites finds an invite by its token, before anyone knows its tenant:
// Store.Invites(). Cross-tenant.
type Invites struct{ s *Store }

// Member is one membership of a tenant with its user's email; Pending
// says its invite is not accepted yet.
type Member struct {
	UserID    string
	Email     string
	Role      string
	Pending   bool
	CreatedAt time.Time
}

// ListWithUsers lists the tenant's members with their users, by email.
func (me Members) ListWithUsers(ctx context.Context) ([]Member, error) {
	s, tenantID := me.s, me.tenant
	var rows []Member
	err := s.q(ctx).Table("memberships m").
		Select("m.user_id, u.email, m.role, m.pending, m.created_at").
		Joins("JOIN users u ON u.id = m.user_id").
		Where("m.tenant_id = ?", tenantID).Order("u.email").Scan(&rows).Error
	return rows, wrap("list member users", err)
}

// Get is userID's membership of tenantID; none is ErrNotFound.
func (me Members) Get(ctx context.Context, userID string) (*Membership, error) {
	s, tenantID := me.s, me.tenant
	var m Membership
	if err := s.q(ctx).Where("tenant_id = ? AND user_id = ?", tenantID, userID).First(&m).Error; err != nil {
		return nil, wrap("get membership", err)
	}
	return &m, nil
}

// Delete removes userID from tenantID; none is ErrNotFound.
func (me Members) Delete(ctx context.Context, userID string) error {
	s, tenantID := me.s, me.tenant
	res := s.q(ctx).Where("tenant_id = ? AND user_id = ?", tenantID, userID).Delete(&Membership{})
	if res.Error != nil {
		return wrap("delete membership", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("delete membership", ErrNotFound)
	}
	return nil
}

// CountOwners counts the tenant's owners, not those still invited.
func (me Members) CountOwners(ctx context.Context) (int64, error) {
	s, tenantID := me.s, me.tenant
	var n int64
	err := s.q(ctx).Model(&Membership{}).Where("tenant_id = ? AND role = ? AND NOT pending", tenantID, "owner").Count(&n).Error
	return n, wrap("count owners", err)
}

// AddPending gives userID the role in tenantID, pending until
// Members.Activate; a membership already there is ErrConflict.
func (me Members) AddPending(ctx context.Context, userID, role string) error {
	s, tenantID := me.s, me.tenant
	m := Membership{TenantID: tenantID, UserID: userID, Role: role, Pending: true}
	return wrap("add pending membership", s.q(ctx).Create(&m).Error)
}

// Activate makes userID's pending membership of tenantID grant
// its role; none is ErrNotFound.
func (me Members) Activate(ctx context.Context, userID string) error {
	s, tenantID := me.s, me.tenant
	res := s.q(ctx).Model(&Membership{}).Where("tenant_id = ? AND user_id = ?", tenantID, userID).Update("pending", false)
	if res.Error != nil {
		return wrap("activate membership", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("activate membership", ErrNotFound)
	}
	return nil
}

// Lock serialises changes to the tenant's memberships: called first
// in a transaction, it makes a second transaction that calls it wait until
// the first ends, so a check such as "one owner remains" and the change it
// guards cannot interleave with another's. On PostgreSQL it locks the
// tenant's row; SQLite's transactions take the database's write lock as
// they begin (_txlock=immediate), which serialises them already.
func (me Members) Lock(ctx context.Context) error {
	s, tenantID := me.s, me.tenant
	if s.dialect != DialectPostgres {
		return nil
	}
	var id string
	err := s.q(ctx).Raw("SELECT id FROM tenants WHERE id = ? FOR UPDATE", tenantID).Scan(&id).Error
	if err == nil && id == "" {
		err = ErrNotFound
	}
	return wrap("lock tenant", err)
}

// SetPassword replaces the user's password hash.
func (us Users) SetPassword(ctx context.Context, userID, hash string) error {
	s := us.s
	res := s.q(ctx).Model(&User{}).Where("id = ?", userID).
		Updates(map[string]any{"password_hash": hash, "updated_at": s.db.NowFunc()})
	if res.Error != nil {
		return wrap("set user password", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("set user password", ErrNotFound)
	}
	return nil
}

// List lists every user, by email, for the operator's command line.
func (us Users) List(ctx context.Context) ([]User, error) {
	s := us.s
	var rows []User
	err := s.q(ctx).Order("email").Find(&rows).Error
	return rows, wrap("list users", err)
}

// Invite is a one-time link that lets an invited user set a password.
// Only the SHA-256 of its token is kept.
type Invite struct {
	TokenHash string `gorm:"primaryKey"`
	UserID    string
	TenantID  string
	ExpiresAt time.Time
	CreatedAt time.Time
}

// Invite inserts an invite.
func (me Members) Invite(ctx context.Context, inv *Invite) error {
	s := me.s
	inv.TenantID = me.tenant
	return wrap("create invite", s.q(ctx).Create(inv).Error)
}

// Get finds the unexpired invite with this token hash; a missing or
// expired one is ErrNotFound.
func (i Invites) Get(ctx context.Context, tokenHash string, now time.Time) (*Invite, error) {
	s := i.s
	var inv Invite
	if err := s.q(ctx).Where("token_hash = ? AND expires_at > ?", tokenHash, now).First(&inv).Error; err != nil {
		return nil, wrap("get invite", err)
	}
	return &inv, nil
}

// Take deletes the unexpired invite with this token hash, so a link
// works once; a missing, expired or already taken one is ErrNotFound. Call
// it in a transaction with what the acceptance writes.
func (i Invites) Take(ctx context.Context, tokenHash string, now time.Time) error {
	s := i.s
	res := s.q(ctx).Where("token_hash = ? AND expires_at > ?", tokenHash, now).Delete(&Invite{})
	if res.Error != nil {
		return wrap("take invite", res.Error)
	}
	if res.RowsAffected == 0 {
		return wrap("take invite", ErrNotFound)
	}
	return nil
}

// DeleteInvites removes the user's invites: those of one tenant, or all
// when tenantID is "".
func (me Members) DeleteInvites(ctx context.Context, userID string) error {
	s, tenantID := me.s, me.tenant
	q := s.q(ctx).Where("user_id = ?", userID)
	if tenantID != "" {
		q = q.Where("tenant_id = ?", tenantID)
	}
	return wrap("delete invites", q.Delete(&Invite{}).Error)
}

// Put gives userID the role in tenantID, replacing an earlier role
// (an upsert, safe against concurrent calls).
func (me Members) Put(ctx context.Context, userID, role string) (*Membership, error) {
	s, tenantID := me.s, me.tenant
	m := Membership{TenantID: tenantID, UserID: userID, Role: role}
	err := s.q(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "tenant_id"}, {Name: "user_id"}},
		DoUpdates: clause.AssignmentColumns([]string{"role"}),
	}).Create(&m).Error
	if err != nil {
		return nil, wrap("put membership", err)
	}
	return &m, nil
}

// List lists the memberships of one tenant.
func (me Members) List(ctx context.Context) ([]Membership, error) {
	s, tenantID := me.s, me.tenant
	var rows []Membership
	if err := s.q(ctx).Where("tenant_id = ?", tenantID).Order("user_id").Find(&rows).Error; err != nil {
		return nil, wrap("list members", err)
	}
	return rows, nil
}
