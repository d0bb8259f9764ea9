package dialog

import (
	"context"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/platform"
)

// OfUser returns every note the tenant's bots keep about the end user
// userID, the most recently written first. Whoever may read the tenant's
// dialogs may read them: notes are what the user said in them.
func (m Memory) OfUser(ctx context.Context, p *platform.Principal, tenant, userID string) ([]apiclient.MemoryNote, error) {
	r := m.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActRead)
	if err != nil {
		return nil, err
	}
	if err := checkUserID(userID); err != nil {
		return nil, err
	}
	notes, err := r.store.Tenant(tenantID).Memory().UserNotes(ctx, userID)
	if err != nil {
		return nil, r.internal(ctx, "user memory", err)
	}
	out := make([]apiclient.MemoryNote, len(notes))
	for i, n := range notes {
		out[i] = apiclient.MemoryNote{ID: n.ID, BotID: n.BotID, UserID: n.UserID, Key: n.Key, Value: n.Value,
			DialogID: n.DialogID, CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt}
	}
	return out, nil
}

// DeleteNote deletes the note id the tenant's bots keep about userID.
// It takes the right to erase end users' data.
func (m Memory) DeleteNote(ctx context.Context, p *platform.Principal, tenant, userID, id string) error {
	r := m.rt
	tenantID, err := r.svc.Auth().AuthorizeTenant(ctx, p, tenant, auth.ObjDialogs, auth.ActErase)
	if err != nil {
		return err
	}
	if err := checkUserID(userID); err != nil {
		return err
	}
	if err := r.store.Tenant(tenantID).Memory().Delete(ctx, userID, id); err != nil {
		return r.storeErr(ctx, "delete memory note", "memory note", err)
	}
	r.metrics.notes.WithLabelValues("deleted").Inc()
	return nil
}

// checkUserID refuses a user id no dialog can have.
func checkUserID(userID string) error {
	if userID == "" || utf8.RuneCountInString(userID) > MaxUserIDLength {
		return platform.Invalid(platform.Detail{Pointer: "/user_id", Message: "must have 1 to 200 characters"})
	}
	return nil
}
