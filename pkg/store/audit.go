package store

import (
	"context"
	"time"
)

// Audit is a tenant's audit log: reach it with Store.Tenant(id).Audit().
type Audit struct{ scope }

// PrefixAudit starts audit entry ids.
const PrefixAudit = "aud"

// AuditEntry is one audited change of a tenant: who (ActorKind "user",
// "key" or "operator", with the user's or key's id and its email or name),
// did what (Action, on Target, with Detail as a JSON object), from where
// (IP) and when.
type AuditEntry struct {
	ID        string `gorm:"primaryKey"`
	TenantID  string
	ActorKind string
	ActorID   string
	ActorName string
	Action    string
	Target    string
	Detail    string
	IP        string
	CreatedAt time.Time
}

// TableName is the audit log's table.
func (AuditEntry) TableName() string { return "audit_log" }

// Add appends e to its tenant's audit log.
func (a Audit) Add(ctx context.Context, e *AuditEntry) error {
	s := a.s
	e.TenantID = a.tenant
	if e.ID == "" {
		e.ID = NewID(PrefixAudit)
	}
	if e.Detail == "" {
		e.Detail = "{}"
	}
	return wrap("add audit entry", s.q(ctx).Create(e).Error)
}

// AuditFilter narrows Audit.List; empty fields match everything.
type AuditFilter struct {
	// Action matches exactly; Actor matches the actor's id or name.
	Action, Actor string
	// Since keeps entries made at or after it.
	Since time.Time
}

// List returns one page of the tenant's audit log, newest
// first; the cursor is the last entry's id.
func (a Audit) List(ctx context.Context, f AuditFilter, p Page) ([]AuditEntry, string, error) {
	s, tenantID := a.s, a.tenant
	q := s.q(ctx).Where("tenant_id = ?", tenantID)
	if f.Action != "" {
		q = q.Where("action = ?", f.Action)
	}
	if f.Actor != "" {
		q = q.Where("actor_id = ? OR actor_name = ?", f.Actor, f.Actor)
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", f.Since.UTC())
	}
	if p.Cursor != "" {
		if !idPattern.MatchString(p.Cursor) {
			return nil, "", wrap("list audit entries", ErrInvalidCursor)
		}
		q = q.Where("id < ?", p.Cursor)
	}
	var rows []AuditEntry
	if err := q.Order("id DESC").Limit(p.limit() + 1).Find(&rows).Error; err != nil {
		return nil, "", wrap("list audit entries", err)
	}
	rows, next := nextCursor(rows, p, func(e AuditEntry) string { return e.ID })
	return rows, next, nil
}
