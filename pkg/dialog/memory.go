package dialog

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/tool/builtin"
)

// Memory is what bots remember about end users: reach it with Runtime.Memory().
type Memory struct{ rt *Runtime }

// Memory returns what bots remember about end users.
func (r *Runtime) Memory() Memory { return Memory{r} }

// Memory across dialogs: a bot whose config enables memory keeps notes
// about the dialog's end user, per tenant, bot and user id, and recalls
// them into the prompt of every run of the user's dialogs with the bot.
// Only a stable user id has memory: a signed token's sub, a user_id a
// server-side caller gave, a channel's user. An anonymous widget visitor's
// id is made for one dialog (AnonymousPrefix), so it has none.

// remembersUser reports whether the dialog's end user can have memory.
func remembersUser(d *store.Dialog) bool {
	return d.UserID != "" && !strings.HasPrefix(d.UserID, AnonymousPrefix)
}

// userMemory is builtin.UserMemory over the store, for one dialog's user.
type userMemory struct {
	r        *Runtime
	tenantID string
	botID    string
	userID   string
	dialogID string
	max      int
}

// recall returns the memory of the dialog's end user and the prompt
// section that recalls it; nil and "" when the bot has no memory or the
// user is anonymous.
func (r *Runtime) recall(ctx context.Context, d *store.Dialog, bot *botconfig.Bot) (builtin.UserMemory, string, error) {
	if !bot.Memory.Enabled || !remembersUser(d) {
		return nil, "", nil
	}
	notes, err := r.store.Tenant(d.TenantID).Memory().Notes(ctx, d.BotID, d.UserID)
	if err != nil {
		return nil, "", r.internal(ctx, "run: recall memory", err)
	}
	shown := make([]botconfig.MemoryNote, len(notes))
	for i, n := range notes {
		shown[i] = botconfig.MemoryNote{Key: n.Key, Value: n.Value}
	}
	mem := &userMemory{r: r, tenantID: d.TenantID, botID: d.BotID, userID: d.UserID, dialogID: d.ID, max: bot.Memory.MaxNotes}
	return mem, botconfig.MemoryPrompt(shown), nil
}

func (m *userMemory) Remember(ctx context.Context, key, value string) error {
	n := &store.MemoryNote{TenantID: m.tenantID, BotID: m.botID, UserID: m.userID, Key: key, Value: value,
		DialogID: m.dialogID, UpdatedAt: m.r.now()}
	err := m.r.store.Tenant(n.TenantID).Memory().Remember(ctx, n, m.max)
	if errors.Is(err, store.ErrMemoryFull) {
		return builtin.ErrUserMemoryFull
	}
	if err == nil {
		m.r.metrics.notes.WithLabelValues("remembered").Inc()
	}
	return err
}

func (m *userMemory) Forget(ctx context.Context, key string) (bool, error) {
	found, err := m.r.store.Tenant(m.tenantID).Memory().Forget(ctx, m.botID, m.userID, key)
	if found {
		m.r.metrics.notes.WithLabelValues("forgotten").Inc()
	}
	return found, err
}

// sweepMemory deletes, as retention, at most RetentionBatch of the
// tenant's notes last written before cutoff.
func (m Memory) sweepMemory(ctx context.Context, tenantID string, cutoff time.Time) error {
	r := m.rt
	n, err := r.store.Tenant(tenantID).Memory().DeleteStale(ctx, cutoff, RetentionBatch)
	if err != nil {
		return err
	}
	r.metrics.notes.WithLabelValues("expired").Add(float64(n))
	return nil
}
