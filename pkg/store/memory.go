package store

import (
	"context"
	"errors"
	"time"
)

// Memory is a tenant's memory notes: reach it with Store.Tenant(id).Memory().
type Memory struct{ scope }

// PrefixMemoryNote starts the id of a memory note.
const PrefixMemoryNote = "mem"

// ErrMemoryFull means the end user already has as many notes with the bot
// as it may keep, and the note's key is new.
var ErrMemoryFull = errors.New("memory full")

// MemoryNote is one note a bot keeps about one end user of its tenant,
// recalled in that user's later dialogs with the bot. Key is unique per
// tenant, bot and user: remembering it again replaces the value.
type MemoryNote struct {
	ID       string `gorm:"primaryKey"`
	TenantID string
	BotID    string
	UserID   string
	Key      string
	Value    string
	// DialogID is the dialog that last wrote the note.
	DialogID  string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// TableName implements gorm's Tabler.
func (MemoryNote) TableName() string { return "memory_notes" }

// Remember stores n (its TenantID, BotID, UserID, Key, Value, DialogID
// and UpdatedAt as now), replacing the value of a note with the same key.
// A new key when the user already has maxNotes notes with the bot is
// ErrMemoryFull. n gets the stored note's id and times.
func (m Memory) Remember(ctx context.Context, n *MemoryNote, maxNotes int) error {
	s := m.s
	n.TenantID = m.tenant
	err := s.Tx(ctx, func(tx *Store) error {
		var existing []MemoryNote
		if err := tx.q(ctx).Where("tenant_id = ? AND bot_id = ? AND user_id = ? AND key = ?", n.TenantID, n.BotID, n.UserID, n.Key).
			Limit(1).Find(&existing).Error; err != nil {
			return err
		}
		now := n.UpdatedAt.UTC()
		if len(existing) == 1 {
			old := existing[0]
			n.ID, n.CreatedAt, n.UpdatedAt = old.ID, old.CreatedAt, now
			return tx.q(ctx).Model(&MemoryNote{}).Where("tenant_id = ? AND id = ?", n.TenantID, old.ID).
				Updates(map[string]any{"value": n.Value, "dialog_id": n.DialogID, "updated_at": now}).Error
		}
		var count int64
		err := tx.q(ctx).Model(&MemoryNote{}).Where("tenant_id = ? AND bot_id = ? AND user_id = ?", n.TenantID, n.BotID, n.UserID).Count(&count).Error
		if err != nil {
			return err
		}
		if count >= int64(maxNotes) {
			return ErrMemoryFull
		}
		n.ID, n.CreatedAt, n.UpdatedAt = NewID(PrefixMemoryNote), now, now
		return tx.q(ctx).Create(n).Error
	})
	if errors.Is(err, ErrMemoryFull) {
		return err
	}
	return wrap("remember note", err)
}

// Forget deletes the note with key that the tenant's bot keeps about
// userID, and reports whether there was one.
func (m Memory) Forget(ctx context.Context, botID, userID, key string) (bool, error) {
	s, tenantID := m.s, m.tenant
	res := s.q(ctx).Where("tenant_id = ? AND bot_id = ? AND user_id = ? AND key = ?", tenantID, botID, userID, key).Delete(&MemoryNote{})
	return res.RowsAffected > 0, wrap("forget note", res.Error)
}

// Notes returns the notes the tenant's bot keeps about userID, the
// most recently written first.
func (m Memory) Notes(ctx context.Context, botID, userID string) ([]MemoryNote, error) {
	s, tenantID := m.s, m.tenant
	var out []MemoryNote
	err := s.q(ctx).Where("tenant_id = ? AND bot_id = ? AND user_id = ?", tenantID, botID, userID).
		Order("updated_at DESC, id DESC").Find(&out).Error
	return out, wrap("memory notes", err)
}

// UserNotes returns every note the tenant's bots keep about userID,
// the most recently written first.
func (m Memory) UserNotes(ctx context.Context, userID string) ([]MemoryNote, error) {
	s, tenantID := m.s, m.tenant
	var out []MemoryNote
	err := s.q(ctx).Where("tenant_id = ? AND user_id = ?", tenantID, userID).
		Order("updated_at DESC, id DESC").Find(&out).Error
	return out, wrap("user memory notes", err)
}

// Delete deletes the tenant's note id about userID; another
// tenant's or user's note is ErrNotFound.
func (m Memory) Delete(ctx context.Context, userID, id string) error {
	s, tenantID := m.s, m.tenant
	res := s.q(ctx).Where("tenant_id = ? AND user_id = ? AND id = ?", tenantID, userID, id).Delete(&MemoryNote{})
	err := res.Error
	if err == nil && res.RowsAffected == 0 {
		err = ErrNotFound
	}
	return wrap("delete memory note", err)
}

// DeleteUser deletes every note the tenant's bots keep about userID
// and says how many there were.
func (m Memory) DeleteUser(ctx context.Context, userID string) (int64, error) {
	s, tenantID := m.s, m.tenant
	res := s.q(ctx).Where("tenant_id = ? AND user_id = ?", tenantID, userID).Delete(&MemoryNote{})
	return res.RowsAffected, wrap("delete user memory", res.Error)
}

// DeleteStale deletes at most limit of the tenant's notes last
// written before cutoff, as retention deletes inactive dialogs, and says
// how many it deleted.
func (m Memory) DeleteStale(ctx context.Context, cutoff time.Time, limit int) (int64, error) {
	s, tenantID := m.s, m.tenant
	stale := s.q(ctx).Model(&MemoryNote{}).Select("id").Where("tenant_id = ? AND updated_at < ?", tenantID, cutoff.UTC()).
		Order("updated_at").Limit(limit)
	res := s.q(ctx).Where("tenant_id = ? AND id IN (?)", tenantID, stale).Delete(&MemoryNote{})
	return res.RowsAffected, wrap("delete stale memory notes", res.Error)
}
