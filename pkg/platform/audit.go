package platform

import (
	"context"
	"encoding/json"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// AuditLog is the audit log: what members and keys changed: reach it with Service.AuditLog().
type AuditLog struct{ svc *Service }

// AuditLog returns the audit log: what members and keys changed.
func (s *Service) AuditLog() AuditLog { return AuditLog{s} }

// Audit actions: what an audit log entry says was done. docs/api.md lists
// them with their details.
const (
	AuditVersionPublished  = "version.published"
	AuditVersionRolledBack = "version.rolled_back"
	AuditCanarySet         = "canary.set"
	AuditCanaryDropped     = "canary.dropped"
	AuditBotCreated        = "bot.created"
	AuditBotDeleted        = "bot.deleted"
	AuditKeyCreated        = "key.created"
	AuditKeyRevoked        = "key.revoked"
	AuditKeyUpdated        = "key.updated"
	AuditSecretSet         = "secret.set"
	AuditSecretDeleted     = "secret.deleted"
	AuditMemberInvited     = "member.invited"
	AuditMemberAdded       = "member.added"
	AuditMemberRoleChanged = "member.role_changed"
	AuditMemberRemoved     = "member.removed"
	AuditInviteAccepted    = "member.invite_accepted"
	AuditWebhookCreated    = "webhook.created"
	AuditWebhookUpdated    = "webhook.updated"
	AuditWebhookDeleted    = "webhook.deleted"
	AuditWebhookRotated    = "webhook.secret_rotated"
	AuditChannelRotated    = "channel.secret_rotated"
	AuditProviderSet       = "provider.set"
	AuditProviderDeleted   = "provider.deleted"
	AuditIdentitySet       = "identity.set"
	AuditIdentityDeleted   = "identity.deleted"
	AuditSSOSet            = "sso.set"
	AuditSSODeleted        = "sso.deleted"
	AuditSSOBreakGlass     = "sso.break_glass"
	AuditTenantUpdated     = "tenant.updated"
	AuditLimitsSet         = "limits.set"
	AuditDialogDeleted     = "dialog.deleted"
	AuditEndUserErased     = "end_user.erased"
	AuditDialogsExported   = "dialogs.exported"
	AuditDialogAssigned    = "dialog.assigned"
	AuditCannedCreated     = "canned_reply.created"
	AuditCannedUpdated     = "canned_reply.updated"
	AuditCannedDeleted     = "canned_reply.deleted"
)

// Actor kinds of audit entries.
const (
	ActorUser     = "user"
	ActorKey      = "key"
	ActorOperator = "operator"
)

// auditRecord is what one change adds to its tenant's audit log; who and
// from where come from the Principal.
type auditRecord struct {
	action string
	// target names what changed: a bot's slug, a key's id, a secret's
	// name, a member's email.
	target string
	// detail holds the change's particulars; never a secret's value.
	detail map[string]any
}

// AuditFilter narrows ListAuditLog.
type AuditFilter struct {
	// Action is one action; Actor an actor's id, email or key name.
	Action, Actor string
	// Since keeps entries made at or after it.
	Since time.Time
}

// audited runs fact in a transaction and adds the audit record it returns
// in that same transaction: the change and its entry commit together.
func (a AuditLog) audited(ctx context.Context, p *Principal, tenantID string, fact func(tx *store.Store) (auditRecord, error)) error {
	s := a.svc
	return s.store.Tx(ctx, func(tx *store.Store) error {
		rec, err := fact(tx)
		if err != nil {
			return err
		}
		return s.AuditLog().writeAudit(ctx, tx, p, tenantID, rec)
	})
}

// auditedEvent is WithEvent for a change that is audited too: fact, its
// webhook event (when an endpoint subscribes) and its audit record commit
// in one transaction. fact returns nil data for a change that changed
// nothing (no event).
func (a AuditLog) auditedEvent(ctx context.Context, p *Principal, ev Event, fact func(tx *store.Store) (any, auditRecord, error)) error {
	s := a.svc
	h, targets, err := s.Webhooks().eventTargets(ctx, ev)
	if err != nil {
		return err
	}
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		data, rec, err := fact(tx)
		if err != nil {
			return err
		}
		if len(targets) > 0 && data != nil {
			if err := writeEvent(ctx, tx, h.slug, ev, data, targets, s.now()); err != nil {
				return err
			}
		}
		return s.AuditLog().writeAudit(ctx, tx, p, ev.TenantID, rec)
	})
	if err == nil && len(targets) > 0 {
		s.Webhooks().wakeDeliverer()
	}
	return err
}

// writeAudit adds rec to the tenant's log; a record without an action (a
// change that changed nothing) adds nothing.
func (a AuditLog) writeAudit(ctx context.Context, tx *store.Store, p *Principal, tenantID string, rec auditRecord) error {
	s := a.svc
	if rec.action == "" {
		return nil
	}
	detail := []byte("{}")
	if len(rec.detail) > 0 {
		var err error
		if detail, err = json.Marshal(rec.detail); err != nil {
			return err
		}
	}
	kind, id, name := p.auditActor()
	return tx.Tenant(tenantID).Audit().Add(ctx, &store.AuditEntry{TenantID: tenantID, ActorKind: kind, ActorID: id, ActorName: name,
		Action: rec.action, Target: rec.target, Detail: string(detail), IP: p.IP, CreatedAt: s.now()})
}

// Record adds an entry to the tenant's (by id) audit log through st: a
// transaction's store, so the entry commits with the change it records,
// or nil for the Service's own store. It is for changes made outside this
// package (the dialog runtime's erasures and exports).
func (a AuditLog) Record(ctx context.Context, st *store.Store, p *Principal, tenantID, action, target string, detail map[string]any) error {
	s := a.svc
	if st == nil {
		st = s.store
	}
	return s.AuditLog().writeAudit(ctx, st, p, tenantID, auditRecord{action: action, target: target, detail: detail})
}

// EndUserDigest names an erased end user in the tenant's audit log:
// "hmac-sha256:" and a digest of the tenant and user id keyed by the
// secrets key. An unkeyed hash of a guessable id (an email, a customer
// number) gives the id back to whoever hashes guesses; this one matches
// the id only for someone holding the server's key, the same user in
// another tenant digests apart, and the same user erased twice twice
// alike.
func (a AuditLog) EndUserDigest(tenantID, userID string) string {
	s := a.svc
	return "hmac-sha256:" + s.opts.Sealer.Digest("end-user", tenantID, userID)
}

// auditActor names p in the audit log: its kind, id and human name.
func (p *Principal) auditActor() (kind, id, name string) {
	switch p.Kind {
	case KindKey:
		return ActorKey, p.KeyID, p.KeyName
	case KindSession:
		return ActorUser, p.UserID, p.Email
	default:
		return ActorOperator, "", "operator"
	}
}

// List returns one page of the tenant's audit log in its wire form,
// newest first. Admins (and sk_ admin keys) may read it.
func (a AuditLog) List(ctx context.Context, p *Principal, tenant string, f AuditFilter, opts ListOptions) ([]apiclient.AuditEntry, string, error) {
	s := a.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjAudit, auth.ActRead)
	if err != nil {
		return nil, "", err
	}
	rows, next, err := s.store.Tenant(t.ID).Audit().List(ctx, store.AuditFilter{Action: f.Action, Actor: f.Actor, Since: f.Since}, opts.page())
	if err != nil {
		return nil, "", s.storeErr(ctx, "list audit log", "audit entry", "", err)
	}
	return mapSlice(rows, func(e *store.AuditEntry) apiclient.AuditEntry {
		return apiclient.AuditEntry{ID: e.ID, Actor: apiclient.AuditActor{Kind: e.ActorKind, ID: e.ActorID, Name: e.ActorName},
			Action: e.Action, Target: e.Target, Detail: json.RawMessage(e.Detail), IP: e.IP, At: e.CreatedAt}
	}), next, nil
}
