package platform

import (
	"context"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Bots is a tenant's bots: reach it with Service.Bots().
type Bots struct{ svc *Service }

// Bots returns a tenant's bots.
func (s *Service) Bots() Bots { return Bots{s} }

// Create validates and compiles config, then creates the bot with it as
// version 1. The bot's name comes from the config. An invalid config is an
// invalid Error whose details point into the config; a config that sends a
// secret somewhere the caller may not send it is forbidden (see
// checkSecretDestinations).
func (b Bots) Create(ctx context.Context, p *Principal, tenant, slug string, config []byte) (Bot, Version, error) {
	s := b.svc
	return s.Bots().CreateWithTests(ctx, p, tenant, slug, config, nil)
}

// CreateWithTests is CreateBot with conversation tests stored with
// version 1 (docs/testing.md); nil or empty tests means none.
func (bo Bots) CreateWithTests(ctx context.Context, p *Principal, tenant, slug string, config, tests []byte) (Bot, Version, error) {
	s := bo.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjBots, auth.ActWrite)
	if err != nil {
		return Bot{}, Version{}, err
	}
	var ps problems
	ps.slug("/slug", slug)
	if err := ps.err(); err != nil {
		return Bot{}, Version{}, err
	}
	compiled, err := s.Configs().compile(ctx, config)
	if err != nil {
		return Bot{}, Version{}, err
	}
	if err := checkTests(tests); err != nil {
		return Bot{}, Version{}, err
	}
	if err := s.Secrets().checkSecretDestinations(ctx, p, t.ID, nil, compiled); err != nil {
		return Bot{}, Version{}, err
	}
	warnings, err := s.Providers().checkProviders(ctx, t.ID, compiled)
	if err != nil {
		return Bot{}, Version{}, err
	}
	if err := s.Configs().checkAgents(ctx, t.ID, slug, compiled); err != nil {
		return Bot{}, Version{}, err
	}
	if err := s.Knowledge().checkKnowledge(ctx, t.ID, compiled); err != nil {
		return Bot{}, Version{}, err
	}
	b := store.Bot{TenantID: t.ID, Slug: slug, Name: compiled.Name}
	v := store.BotVersion{TenantID: t.ID, Config: string(config), Tests: string(tests), Prompt: compiled.SystemPrompt,
		Fingerprint: compiled.Fingerprint, CreatedBy: p.Actor()}
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.Tenant(b.TenantID).Bots().Create(ctx, &b); err != nil {
			return s.storeErr(ctx, "create bot", "bot", "a bot with slug "+slug+" already exists", err)
		}
		v.BotID = b.ID
		if err := tx.Tenant(v.TenantID).Versions().Add(ctx, &v); err != nil {
			return s.internal(ctx, "create bot: version 1", err)
		}
		return s.AuditLog().writeAudit(ctx, tx, p, t.ID, auditRecord{action: AuditBotCreated, target: slug})
	})
	if err != nil {
		return Bot{}, Version{}, err
	}
	out := versionView(&v)
	out.Warnings = warnings
	return b, out, nil
}

// List lists the tenant's bots, oldest first.
func (b Bots) List(ctx context.Context, p *Principal, tenant string, opts ListOptions) ([]Bot, string, error) {
	s := b.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjBots, auth.ActRead)
	if err != nil {
		return nil, "", err
	}
	rows, next, err := s.store.Tenant(t.ID).Bots().List(ctx, opts.page())
	if err != nil {
		return nil, "", s.storeErr(ctx, "list bots", "bot", "", err)
	}
	return rows, next, nil
}

// Get returns the tenant's bot by id or slug.
func (bo Bots) Get(ctx context.Context, p *Principal, tenant, bot string) (Bot, error) {
	s := bo.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjBots, auth.ActRead)
	if err != nil {
		return Bot{}, err
	}
	b, err := s.store.Tenant(t.ID).Bots().Get(ctx, bot)
	if err != nil {
		return Bot{}, s.storeErr(ctx, "get bot", "bot", "", err)
	}
	return *b, nil
}

// AuthorizeChat checks that p may chat with the tenant's bot from a browser
// origin ("" for server-to-server calls) and returns the bot. The dialog
// routes call it before creating dialogs or sending messages: a pk key
// works only with its own bot and only from its allowed origins.
func (a Auth) AuthorizeChat(ctx context.Context, p *Principal, tenant, bot, origin string) (Bot, error) {
	t, err := a.tenantFor(ctx, p, tenant, auth.ObjDialogs, auth.ActChat)
	if err != nil {
		return Bot{}, err
	}
	return a.chatBot(ctx, p, t.ID, bot, origin)
}

// AuthorizeChatIn is AuthorizeChat in the tenant with this id, for a
// caller who resolved the tenant's reference itself (from a cache: tenant
// rows never change). It checks p exactly as strictly and reads only the
// bot, which is never cached: publishing changes it, and every server must
// see that at once.
func (a Auth) AuthorizeChatIn(ctx context.Context, p *Principal, tenantID, bot, origin string) (Bot, error) {
	if p == nil {
		return Bot{}, unauthorized("authentication required")
	}
	if err := a.Authorize(p, tenantID, auth.ObjDialogs, auth.ActChat); err != nil {
		return Bot{}, err
	}
	return a.chatBot(ctx, p, tenantID, bot, origin)
}

// chatBot reads the bot p, authorised to chat in its tenant, asks for and
// holds a publishable key to its own bot and allowed origins.
func (a Auth) chatBot(ctx context.Context, p *Principal, tenantID, bot, origin string) (Bot, error) {
	s := a.svc
	b, err := s.store.Tenant(tenantID).Bots().Get(ctx, bot)
	if err != nil {
		return Bot{}, s.storeErr(ctx, "authorize chat", "bot", "", err)
	}
	if p.KeyKind == auth.KindPublishable {
		if p.BotID != b.ID {
			return Bot{}, Errorf(CodeForbidden, "this key may only chat with its own bot")
		}
		if !p.AllowsOrigin(origin) {
			return Bot{}, Errorf(CodeForbidden, "this key may not be used from this origin")
		}
	}
	return *b, nil
}
