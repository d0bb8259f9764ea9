package platform

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// CannedReplies is a tenant's canned replies for operators: reach it with Service.CannedReplies().
type CannedReplies struct{ svc *Service }

// CannedReplies returns a tenant's canned replies for operators.
func (s *Service) CannedReplies() CannedReplies { return CannedReplies{s} }

// This file is a tenant's canned replies: texts its operators insert in
// a reply by typing /shortcut in the inbox's composer. The support team
// keeps them itself, so operators may change them; each change is
// audited.

// MaxCannedReplyChars caps a canned reply's text.
const MaxCannedReplyChars = 4000

// cannedShortcut is what a shortcut may be: what follows the / in the
// composer, one word.
var cannedShortcut = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)

// wireCanned is a canned reply as callers see it: its row without the
// tenant.
func wireCanned(r *store.CannedReply) apiclient.CannedReply {
	return apiclient.CannedReply{ID: r.ID, Shortcut: r.Shortcut, Text: r.Text, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// checkCanned says what is wrong with a canned reply's fields.
func checkCanned(shortcut, text string) error {
	var details []Detail
	if !cannedShortcut.MatchString(shortcut) {
		details = append(details, Detail{Pointer: "/shortcut", Message: "must be 1 to 40 lowercase letters, digits, - or _, starting with a letter or digit"})
	}
	switch {
	case strings.TrimSpace(text) == "":
		details = append(details, Detail{Pointer: "/text", Message: "is required"})
	case utf8.RuneCountInString(text) > MaxCannedReplyChars:
		details = append(details, Detail{Pointer: "/text", Message: fmt.Sprintf("must have at most %d characters", MaxCannedReplyChars)})
	}
	if len(details) > 0 {
		return Invalid(details...)
	}
	return nil
}

const cannedTaken = "another canned reply has this shortcut"

// List returns the tenant's canned replies by shortcut.
func (c CannedReplies) List(ctx context.Context, p *Principal, tenant string) ([]apiclient.CannedReply, error) {
	s := c.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.Tenant(t.ID).CannedReplies().List(ctx)
	if err != nil {
		return nil, s.internal(ctx, "list canned replies", err)
	}
	return mapSlice(rows, wireCanned), nil
}

// Create adds a canned reply; a shortcut in use is a conflict.
func (c CannedReplies) Create(ctx context.Context, p *Principal, tenant, shortcut, text string) (apiclient.CannedReply, error) {
	s := c.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return apiclient.CannedReply{}, err
	}
	if err := checkCanned(shortcut, text); err != nil {
		return apiclient.CannedReply{}, err
	}
	r := &store.CannedReply{Shortcut: shortcut, Text: text}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		all, err := tx.Tenant(t.ID).CannedReplies().List(ctx)
		if err != nil {
			return auditRecord{}, err
		}
		if len(all) >= store.MaxCannedReplies {
			return auditRecord{}, Errorf(CodeConflict, "the tenant has %d canned replies, the most it may keep", store.MaxCannedReplies)
		}
		err = tx.Tenant(t.ID).CannedReplies().Create(ctx, r, s.now())
		return auditRecord{action: AuditCannedCreated, target: shortcut, detail: map[string]any{"id": r.ID}}, err
	})
	var refused *Error
	if errors.As(err, &refused) {
		return apiclient.CannedReply{}, refused
	}
	if err != nil {
		return apiclient.CannedReply{}, s.storeErr(ctx, "create canned reply", "canned reply", cannedTaken, err)
	}
	return wireCanned(r), nil
}

// Update changes a canned reply's shortcut, text or both (nil
// keeps it).
func (c CannedReplies) Update(ctx context.Context, p *Principal, tenant, id string, shortcut, text *string) (apiclient.CannedReply, error) {
	s := c.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return apiclient.CannedReply{}, err
	}
	var r *store.CannedReply
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		old, err := tx.Tenant(t.ID).CannedReplies().Get(ctx, id)
		if err != nil {
			return auditRecord{}, err
		}
		newShortcut, newText := old.Shortcut, old.Text
		if shortcut != nil {
			newShortcut = *shortcut
		}
		if text != nil {
			newText = *text
		}
		if err := checkCanned(newShortcut, newText); err != nil {
			return auditRecord{}, err
		}
		r, err = tx.Tenant(t.ID).CannedReplies().Update(ctx, id, newShortcut, newText, s.now())
		return auditRecord{action: AuditCannedUpdated, target: newShortcut, detail: map[string]any{"id": id}}, err
	})
	var refused *Error
	if errors.As(err, &refused) {
		return apiclient.CannedReply{}, refused
	}
	if err != nil {
		return apiclient.CannedReply{}, s.storeErr(ctx, "update canned reply", "canned reply", cannedTaken, err)
	}
	return wireCanned(r), nil
}

// Delete deletes a canned reply.
func (c CannedReplies) Delete(ctx context.Context, p *Principal, tenant, id string) error {
	s := c.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjDialogs, auth.ActOperate)
	if err != nil {
		return err
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		r, err := tx.Tenant(t.ID).CannedReplies().Get(ctx, id)
		if err != nil {
			return auditRecord{}, err
		}
		return auditRecord{action: AuditCannedDeleted, target: r.Shortcut, detail: map[string]any{"id": id}}, tx.Tenant(t.ID).CannedReplies().Delete(ctx, id)
	})
	return s.storeErr(ctx, "delete canned reply", "canned reply", "", err)
}
