package platform

import (
	"context"
	"time"

	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// The data of each webhook event, as docs/events.md documents it and
// configs/webhooks/*.schema.json describes it. The envelope around it is
// webhook.Envelope: {type, timestamp, tenant, data}.

// versionPublishedData is bot.version_published's data.
type versionPublishedData struct {
	BotID string `json:"bot_id"`
	Bot   string `json:"bot"`
	Name  string `json:"name"`
	// Version is the number now live; PreviousVersion the one before (0:
	// none), higher than Version on a rollback.
	Version         int    `json:"version"`
	PreviousVersion int    `json:"previous_version"`
	PublishedBy     string `json:"published_by"`
}

// quotaReachedData is usage.quota_reached's data.
type quotaReachedData struct {
	// Quota names the limit: daily_tokens.
	Quota string `json:"quota"`
	Limit int64  `json:"limit"`
	Used  int64  `json:"used"`
	// Day is the UTC day the quota counts (YYYY-MM-DD); ResetsAt when it
	// renews.
	Day      string    `json:"day"`
	ResetsAt time.Time `json:"resets_at"`
}

// memberChangedData is member.changed's data (docs/events.md).
type memberChangedData struct {
	Change       string `json:"change"`
	UserID       string `json:"user_id"`
	Email        string `json:"email"`
	Role         string `json:"role"`
	PreviousRole string `json:"previous_role"`
	By           string `json:"by"`
}

func memberEvent(tenantID string) Event {
	return Event{TenantID: tenantID, Type: webhook.MemberChanged}
}

// memberChanged is the event of change to m, made by p.
func memberChanged(p *Principal, change string, m Member, previousRole string) memberChangedData {
	_, id, name := p.auditActor()
	by := id // a key's id
	if p.Kind != KindKey {
		by = name // a user's email, or "operator"
	}
	return memberChangedData{Change: change, UserID: m.UserID, Email: m.Email, Role: m.Role, PreviousRole: previousRole, By: by}
}

// QuotaReached writes usage.quota_reached once per tenant and UTC day,
// however many requests and processes find the quota spent: the event's
// dedupe key is the day, and this process remembers having written it.
func (w Webhooks) QuotaReached(ctx context.Context, tenantID, day string, limit, used int64, resets time.Time) {
	s := w.svc
	key := tenantID + "|" + day
	if _, done := s.quotaEvents.LoadOrStore(key, true); done {
		return
	}
	ev := Event{TenantID: tenantID, Type: webhook.UsageQuotaReached, Dedupe: webhook.UsageQuotaReached + ":daily_tokens:" + day}
	err := s.Webhooks().WithEvent(ctx, ev, func(*store.Store) (any, error) {
		return quotaReachedData{Quota: "daily_tokens", Limit: limit, Used: used, Day: day, ResetsAt: resets}, nil
	})
	if err != nil {
		s.quotaEvents.Delete(key) // the next refused request tries again
		s.log.ErrorContext(ctx, "webhooks: write usage.quota_reached", "tenant", tenantID, "err", err)
	}
}
