package platform

import (
	"context"
	"fmt"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Canary is a bot's candidate version with what it and the live version
// have started and spent, to compare them before promoting or dropping.
type Canary struct {
	Version int
	Percent int
	Live    VersionUsage
	Canary  VersionUsage
}

// VersionUsage is what one version's (non-preview) dialogs started and spent.
type VersionUsage struct {
	Version      int
	Dialogs      int64
	InputTokens  int64
	OutputTokens int64
}

// SetCanary sends percent (1-100) of the bot's new dialogs to version, a
// saved version other than the live one; it takes the right to publish.
// A bot that requires passing tests only takes a canary whose tests pass.
func (v Versions) SetCanary(ctx context.Context, p *Principal, tenant, bot string, version, percent int) (Bot, error) {
	s := v.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActPublish)
	if err != nil {
		return Bot{}, err
	}
	var ps problems
	if version < 1 {
		ps.add("/version", "must be a version number (1 or more)")
	} else if version == b.PublishedVersion {
		ps.add("/version", "version %d is already live; a canary is another version", version)
	}
	if percent < 1 || percent > 100 {
		ps.add("/percent", "must be 1 to 100")
	}
	if b.PublishedVersion == 0 {
		ps.add("", "publish a version before starting a canary")
	}
	if err := ps.err(); err != nil {
		return Bot{}, err
	}
	if b.RequirePassingTests {
		if err := s.Tests().publishGate(ctx, b, version); err != nil {
			return Bot{}, err
		}
	}
	var updated *store.Bot
	err = s.AuditLog().audited(ctx, p, b.TenantID, func(tx *store.Store) (auditRecord, error) {
		updated, err = tx.Tenant(b.TenantID).Bots().SetCanary(ctx, b.ID, version, percent)
		return auditRecord{action: AuditCanarySet, target: b.Slug, detail: map[string]any{"version": version, "percent": percent}}, err
	})
	if err != nil {
		return Bot{}, s.storeErr(ctx, "set canary", "version", "", err)
	}
	return *updated, nil
}

// DropCanary ends the bot's canary: every new dialog runs the live version.
func (v Versions) DropCanary(ctx context.Context, p *Principal, tenant, bot string) (Bot, error) {
	s := v.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActPublish)
	if err != nil {
		return Bot{}, err
	}
	var updated *store.Bot
	err = s.AuditLog().audited(ctx, p, b.TenantID, func(tx *store.Store) (auditRecord, error) {
		updated, err = tx.Tenant(b.TenantID).Bots().SetCanary(ctx, b.ID, 0, 0)
		rec := auditRecord{action: AuditCanaryDropped, target: b.Slug, detail: map[string]any{"version": b.CanaryVersion}}
		if b.CanaryVersion == 0 {
			rec = auditRecord{} // there was none
		}
		return rec, err
	})
	if err != nil {
		return Bot{}, s.storeErr(ctx, "drop canary", "bot", "", err)
	}
	return *updated, nil
}

// PromoteCanary publishes the canary version (through the test gate, like
// any publish) and ends the canary.
func (v Versions) PromoteCanary(ctx context.Context, p *Principal, tenant, bot string) (Bot, error) {
	s := v.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActPublish)
	if err != nil {
		return Bot{}, err
	}
	if b.CanaryVersion == 0 {
		return Bot{}, Errorf(CodeConflict, "bot %s has no canary to promote", b.Slug)
	}
	if _, err := s.Versions().Publish(ctx, p, tenant, bot, b.CanaryVersion); err != nil {
		return Bot{}, err
	}
	return s.Versions().DropCanary(ctx, p, tenant, bot)
}

// GetCanary returns the bot's canary with the usage of it and of the live
// version, each metered from its own dialogs.
func (ve Versions) GetCanary(ctx context.Context, p *Principal, tenant, bot string) (Canary, error) {
	s := ve.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActRead)
	if err != nil {
		return Canary{}, err
	}
	if b.CanaryVersion == 0 {
		return Canary{}, NotFound(fmt.Sprintf("canary of bot %s", b.Slug))
	}
	usage, err := s.store.Tenant(b.TenantID).Versions().Usage(ctx, b.ID, []int{b.PublishedVersion, b.CanaryVersion})
	if err != nil {
		return Canary{}, s.internal(ctx, "canary usage", err)
	}
	view := func(v int) VersionUsage {
		u := usage[v]
		return VersionUsage{Version: v, Dialogs: u.Dialogs, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}
	}
	return Canary{Version: b.CanaryVersion, Percent: b.CanaryPercent, Live: view(b.PublishedVersion), Canary: view(b.CanaryVersion)}, nil
}
