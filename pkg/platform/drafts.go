package platform

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Drafts is the autosaved drafts of bot configs, one per person and bot: reach it with Service.Drafts().
type Drafts struct{ svc *Service }

// Drafts returns the autosaved drafts of bot configs, one per person and bot.
func (s *Service) Drafts() Drafts { return Drafts{s} }

// maxDraftChars bounds a draft's config and its tests: a draft is the
// console's text as typed, so it is kept even when it is not JSON yet,
// and only its size is checked.
const maxDraftChars = 512 << 10

// Get returns p's draft of the bot, and false when p has none.
// Drafts are per person: nobody reads another's.
func (dr Drafts) Get(ctx context.Context, p *Principal, tenant, bot string) (apiclient.Draft, bool, error) {
	s := dr.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActWrite)
	if err != nil {
		return apiclient.Draft{}, false, err
	}
	d, err := s.store.Tenant(b.TenantID).Drafts().Get(ctx, b.ID, p.Actor())
	if errors.Is(err, store.ErrNotFound) {
		return apiclient.Draft{}, false, nil
	}
	if err != nil {
		return apiclient.Draft{}, false, s.storeErr(ctx, "get draft", "draft", "", err)
	}
	return apiclient.Draft{Config: d.Config, Tests: d.Tests, UpdatedAt: d.UpdatedAt}, true, nil
}

// Put replaces p's draft of the bot with d's config and tests (the
// store sets UpdatedAt). Only those who may save a version keep a draft
// of one.
func (dr Drafts) Put(ctx context.Context, p *Principal, tenant, bot string, d apiclient.Draft) (apiclient.Draft, error) {
	s := dr.svc
	var ps problems
	if d.Config == "" {
		ps.add("/config", "is required")
	}
	if utf8.RuneCountInString(d.Config) > maxDraftChars {
		ps.add("/config", "must have at most %d characters", maxDraftChars)
	}
	if utf8.RuneCountInString(d.Tests) > maxDraftChars {
		ps.add("/tests", "must have at most %d characters", maxDraftChars)
	}
	if err := ps.err(); err != nil {
		return apiclient.Draft{}, err
	}
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActWrite)
	if err != nil {
		return apiclient.Draft{}, err
	}
	row := store.BotDraft{BotID: b.ID, Owner: p.Actor(), Config: d.Config, Tests: d.Tests}
	if err := s.store.Tenant(b.TenantID).Drafts().Put(ctx, &row); err != nil {
		return apiclient.Draft{}, s.storeErr(ctx, "put draft", "draft", "", err)
	}
	return apiclient.Draft{Config: row.Config, Tests: row.Tests, UpdatedAt: row.UpdatedAt}, nil
}

// Delete discards p's draft of the bot; having none is fine.
func (d Drafts) Delete(ctx context.Context, p *Principal, tenant, bot string) error {
	s := d.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActWrite)
	if err != nil {
		return err
	}
	return s.Drafts().dropDraft(ctx, p, b)
}

// dropDraft removes p's draft of b: discarded, or saved as a version.
func (d Drafts) dropDraft(ctx context.Context, p *Principal, b *store.Bot) error {
	s := d.svc
	err := s.store.Tenant(b.TenantID).Drafts().Delete(ctx, b.ID, p.Actor())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return s.storeErr(ctx, "delete draft", "draft", "", err)
	}
	return nil
}
