package platform

import (
	"context"
	"errors"
	"fmt"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/configdiff"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/webhook"
)

// Versions is a bot's versions, publishing and canary: reach it with Service.Versions().
type Versions struct{ svc *Service }

// Versions returns a bot's versions, publishing and canary.
func (s *Service) Versions() Versions { return Versions{s} }

// versionRetries bounds how often CreateVersion retries after losing a race
// for the next number to a concurrent save.
const versionRetries = 3

// Create saves config as the bot's next version, unless it compiles
// to the same fingerprint as the latest version: then the latest is
// returned with created false and nothing is written. That makes saving the
// same config twice (parley apply, a double click) a no-op. Like CreateBot,
// it refuses a caller below admin a config that sends a secret to a new
// origin.
func (v Versions) Create(ctx context.Context, p *Principal, tenant, bot string, config []byte) (Version, bool, error) {
	s := v.svc
	return s.Versions().CreateWithTests(ctx, p, tenant, bot, config, nil)
}

// CreateWithTests is CreateVersion with conversation tests stored
// with the version (docs/testing.md). A version is the same as the latest
// only when both its config's fingerprint and its tests are.
func (ve Versions) CreateWithTests(ctx context.Context, p *Principal, tenant, bot string, config, tests []byte) (Version, bool, error) {
	s := ve.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActWrite)
	if err != nil {
		return Version{}, false, err
	}
	compiled, err := s.Configs().compile(ctx, config)
	if err != nil {
		return Version{}, false, err
	}
	if err := checkTests(tests); err != nil {
		return Version{}, false, err
	}
	if err := s.Secrets().checkSecretDestinations(ctx, p, b.TenantID, b, compiled); err != nil {
		return Version{}, false, err
	}
	warnings, err := s.Providers().checkProviders(ctx, b.TenantID, compiled)
	if err != nil {
		return Version{}, false, err
	}
	if err := s.Configs().checkAgents(ctx, b.TenantID, b.Slug, compiled); err != nil {
		return Version{}, false, err
	}
	if err := s.Knowledge().checkKnowledge(ctx, b.TenantID, compiled); err != nil {
		return Version{}, false, err
	}
	for attempt := 1; ; attempt++ {
		v := store.BotVersion{TenantID: b.TenantID, BotID: b.ID, Config: string(config), Tests: string(tests),
			Prompt: compiled.SystemPrompt, Fingerprint: compiled.Fingerprint, CreatedBy: p.Actor()}
		created, err := s.Versions().addVersionUnlessSame(ctx, &v, compiled.Name)
		if errors.Is(err, store.ErrConflict) && attempt < versionRetries {
			continue
		}
		if err != nil {
			return Version{}, false, s.storeErr(ctx, "create version", "bot",
				"another version was saved at the same time; try again", err)
		}
		// The draft this version was saved from is kept in the version
		// now; a draft left behind is only offered again, so the save
		// stands.
		if err := s.Drafts().dropDraft(ctx, p, b); err != nil {
			s.log.WarnContext(ctx, "drop draft after save", "err", err)
		}
		out := versionView(&v)
		out.Warnings = warnings
		return out, created, nil
	}
}

// addVersionUnlessSame adds v, or fills v with the latest version when that
// has the same fingerprint. It also keeps the bot's name in step with its
// newest config.
func (ve Versions) addVersionUnlessSame(ctx context.Context, v *store.BotVersion, name string) (bool, error) {
	s := ve.svc
	created := false
	err := s.store.Tx(ctx, func(tx *store.Store) error {
		t := tx.Tenant(v.TenantID)
		latest, err := t.Versions().Latest(ctx, v.BotID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if latest != nil && latest.Fingerprint == v.Fingerprint && latest.Tests == v.Tests {
			*v = *latest
			return nil
		}
		if err := t.Versions().Add(ctx, v); err != nil {
			return err
		}
		created = true
		return t.Bots().Rename(ctx, v.BotID, name)
	})
	return created, err
}

// List lists the bot's versions, lowest number first.
func (v Versions) List(ctx context.Context, p *Principal, tenant, bot string, opts ListOptions) ([]Version, string, error) {
	s := v.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActRead)
	if err != nil {
		return nil, "", err
	}
	rows, next, err := s.store.Tenant(b.TenantID).Versions().List(ctx, b.ID, opts.page())
	if err != nil {
		return nil, "", s.storeErr(ctx, "list versions", "version", "", err)
	}
	return mapSlice(rows, versionView), next, nil
}

// Get returns version number n of the bot.
func (ve Versions) Get(ctx context.Context, p *Principal, tenant, bot string, n int) (Version, error) {
	s := ve.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActRead)
	if err != nil {
		return Version{}, err
	}
	v, err := s.store.Tenant(b.TenantID).Versions().Get(ctx, b.ID, n)
	if err != nil {
		return Version{}, s.storeErr(ctx, "get version", "version", "", err)
	}
	return versionView(v), nil
}

// Publish makes version n the bot's live version. Rolling back is
// publishing an older number.
func (v Versions) Publish(ctx context.Context, p *Principal, tenant, bot string, n int) (Bot, error) {
	s := v.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActPublish)
	if err != nil {
		return Bot{}, err
	}
	if b.RequirePassingTests {
		if err := s.Tests().publishGate(ctx, b, n); err != nil {
			return Bot{}, err
		}
	}
	var pub *store.Bot
	err = s.AuditLog().auditedEvent(ctx, p, Event{TenantID: b.TenantID, BotID: b.ID, Type: webhook.BotVersionPublished}, func(st *store.Store) (any, auditRecord, error) {
		var err error
		if pub, err = st.Tenant(b.TenantID).Versions().Publish(ctx, b.ID, n); err != nil {
			return nil, auditRecord{}, err
		}
		action := AuditVersionPublished
		if n < b.PublishedVersion {
			action = AuditVersionRolledBack
		}
		rec := auditRecord{action: action, target: pub.Slug, detail: map[string]any{"version": n, "previous_version": b.PublishedVersion}}
		return versionPublishedData{BotID: pub.ID, Bot: pub.Slug, Name: pub.Name, Version: n, PreviousVersion: b.PublishedVersion,
			PublishedBy: p.Actor()}, rec, nil
	})
	if err != nil {
		return Bot{}, s.storeErr(ctx, "publish", "version", "", err)
	}
	return *pub, nil
}

// botFor resolves the tenant with a permission check, then its bot.
func (v Versions) botFor(ctx context.Context, p *Principal, tenant, bot, object, action string) (*store.Bot, error) {
	s := v.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, object, action)
	if err != nil {
		return nil, err
	}
	b, err := s.store.Tenant(t.ID).Bots().Get(ctx, bot)
	if err != nil {
		return nil, s.storeErr(ctx, "resolve bot", "bot", "", err)
	}
	return b, nil
}

// VersionDiff is what changed from one version's config to another's.
type VersionDiff struct {
	From    int
	To      int
	Changes []configdiff.Change
	Unified string
	// TestsChanged says the versions' stored tests differ.
	TestsChanged bool
}

// Diff compares version n's config with version m's, either way
// round; anyone who may read versions may compare them.
func (v Versions) Diff(ctx context.Context, p *Principal, tenant, bot string, n, m int) (VersionDiff, error) {
	s := v.svc
	b, err := s.Versions().botFor(ctx, p, tenant, bot, auth.ObjVersions, auth.ActRead)
	if err != nil {
		return VersionDiff{}, err
	}
	from, err := s.store.Tenant(b.TenantID).Versions().Get(ctx, b.ID, n)
	if err != nil {
		return VersionDiff{}, s.storeErr(ctx, "diff versions", "version", "", err)
	}
	to, err := s.store.Tenant(b.TenantID).Versions().Get(ctx, b.ID, m)
	if err != nil {
		return VersionDiff{}, s.storeErr(ctx, "diff versions", "version", "", err)
	}
	d, err := configdiff.Compare([]byte(from.Config), []byte(to.Config), fmt.Sprintf("version %d", n), fmt.Sprintf("version %d", m))
	if err != nil {
		return VersionDiff{}, s.internal(ctx, "diff versions", err)
	}
	return VersionDiff{From: n, To: m, Changes: d.Changes, Unified: d.Unified, TestsChanged: from.Tests != to.Tests}, nil
}
