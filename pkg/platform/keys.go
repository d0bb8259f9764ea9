package platform

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// APIKeys is a tenant's API keys: reach it with Service.APIKeys().
type APIKeys struct{ svc *Service }

// APIKeys returns a tenant's API keys.
func (s *Service) APIKeys() APIKeys { return APIKeys{s} }

// APIKeyInput describes a new key.
type APIKeyInput struct {
	Name string
	// Kind is "sk" or "pk"; empty means pk when Bot is set, else sk.
	Kind string
	// Scopes of an sk key: "admin" and/or "chat". A pk key is always "chat".
	Scopes []string
	// Bot (id or slug) and Origins bind a pk key; both are required for pk.
	Bot     string
	Origins []string
	// ExpiresAt, when set, must be in the future.
	ExpiresAt *time.Time
}

// Create creates a key in the tenant and returns it in plaintext, this
// once.
func (a APIKeys) Create(ctx context.Context, p *Principal, tenant string, in APIKeyInput) (CreatedKey, error) {
	s := a.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjKeys, auth.ActWrite)
	if err != nil {
		return CreatedKey{}, err
	}
	k, err := s.APIKeys().checkKeyInput(ctx, t.ID, in)
	if err != nil {
		return CreatedKey{}, err
	}
	gen, err := auth.GenerateAPIKey(k.Kind)
	if err != nil {
		return CreatedKey{}, s.internal(ctx, "create api key", err)
	}
	k.Hash, k.Prefix, k.Last4 = gen.Hash, gen.Prefix, gen.Last4
	if k.Kind == auth.KindPublishable {
		k.Publishable = gen.Plaintext // public by design; an sk key's plaintext is never kept
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		err := tx.Tenant(k.TenantID).Keys().Create(ctx, k) // gives k its id
		return auditRecord{action: AuditKeyCreated, target: k.ID, detail: keyDetail(k)}, err
	})
	if err != nil {
		return CreatedKey{}, s.internal(ctx, "create api key", err)
	}
	return CreatedKey{APIKey: keyView(k), Key: gen.Plaintext}, nil
}

// checkKeyInput validates in (all problems at once) and returns the unsaved
// key record.
func (a APIKeys) checkKeyInput(ctx context.Context, tenantID string, in APIKeyInput) (*store.APIKey, error) {
	s := a.svc
	var ps problems
	ps.name("/name", in.Name, 200)
	kind := in.Kind
	if kind == "" {
		kind = auth.KindSecret
		if in.Bot != "" {
			kind = auth.KindPublishable
		}
	}
	k := &store.APIKey{TenantID: tenantID, Name: strings.TrimSpace(in.Name), Kind: kind}
	if in.ExpiresAt != nil {
		// Stored in UTC like every other time, so SQLite's text timestamps
		// compare correctly.
		exp := in.ExpiresAt.UTC()
		k.ExpiresAt = &exp
	}
	switch kind {
	case auth.KindSecret:
		k.Scopes = checkScopes(&ps, in.Scopes)
		if in.Bot != "" {
			ps.add("/bot", "only pk keys are bound to a bot")
		}
		if len(in.Origins) > 0 {
			ps.add("/origins", "only pk keys are bound to origins")
		}
	case auth.KindPublishable:
		for i, sc := range in.Scopes {
			if sc != auth.ScopeChat {
				ps.add(fmt.Sprintf("/scopes/%d", i), "pk keys may only have the chat scope")
			}
		}
		k.Scopes = store.StringList{auth.ScopeChat}
		k.Origins = checkOrigins(&ps, in.Origins)
		botID, err := s.APIKeys().keyBot(ctx, &ps, tenantID, in.Bot)
		if err != nil {
			return nil, err
		}
		k.BotID = botID
	default:
		ps.add("/kind", `must be "sk" or "pk"`)
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(s.now()) {
		ps.add("/expires_at", "must be in the future")
	}
	return k, ps.err()
}

func checkScopes(ps *problems, scopes []string) store.StringList {
	if len(scopes) == 0 {
		ps.add("/scopes", `needs at least one of "admin", "chat"`)
	}
	out := store.StringList{}
	for i, sc := range scopes {
		switch {
		case sc != auth.ScopeAdmin && sc != auth.ScopeChat:
			ps.add(fmt.Sprintf("/scopes/%d", i), `must be "admin" or "chat"`)
		case !slices.Contains(out, sc):
			out = append(out, sc)
		}
	}
	return out
}

// checkOrigins accepts exact web origins (scheme://host[:port]); a wildcard
// would let any site spend the tenant's quota with the key.
func checkOrigins(ps *problems, origins []string) store.StringList {
	if len(origins) == 0 {
		ps.add("/origins", "a pk key needs at least one allowed origin, such as https://www.example.com")
	}
	out := store.StringList{}
	for i, o := range origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			ps.add(fmt.Sprintf("/origins/%d", i), "must be an origin like https://www.example.com (scheme, host, optional port; no path)")
			continue
		}
		out = append(out, strings.ToLower(o))
	}
	return out
}

// keyBot resolves the bot a pk key is bound to, within the tenant.
func (a APIKeys) keyBot(ctx context.Context, ps *problems, tenantID, ref string) (*string, error) {
	s := a.svc
	if ref == "" {
		ps.add("/bot", "a pk key must name the bot it chats with")
		return nil, nil
	}
	b, err := s.store.Tenant(tenantID).Bots().Get(ctx, ref)
	switch {
	case errors.Is(err, store.ErrNotFound):
		ps.add("/bot", "no bot %q in this tenant", ref)
		return nil, nil
	case err != nil:
		return nil, s.internal(ctx, "key bot", err)
	}
	return &b.ID, nil
}

// List lists the tenant's keys, revoked and expired ones included.
func (a APIKeys) List(ctx context.Context, p *Principal, tenant string, opts ListOptions) ([]APIKey, string, error) {
	s := a.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjKeys, auth.ActRead)
	if err != nil {
		return nil, "", err
	}
	rows, next, err := s.store.Tenant(t.ID).Keys().List(ctx, opts.page())
	if err != nil {
		return nil, "", s.storeErr(ctx, "list api keys", "api key", "", err)
	}
	return mapSlice(rows, keyView), next, nil
}

// Revoke revokes the tenant's key at once: the next request with it
// is unauthorized. Revoking a revoked key is not an error.
func (a APIKeys) Revoke(ctx context.Context, p *Principal, tenant, keyID string) (APIKey, error) {
	s := a.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjKeys, auth.ActWrite)
	if err != nil {
		return APIKey{}, err
	}
	var k *store.APIKey
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		if k, err = tx.Tenant(t.ID).Keys().Revoke(ctx, keyID, s.now()); err != nil {
			return auditRecord{}, err
		}
		return auditRecord{action: AuditKeyRevoked, target: k.ID, detail: keyDetail(k)}, nil
	})
	if err != nil {
		return APIKey{}, s.storeErr(ctx, "revoke api key", "api key", "", err)
	}
	return keyView(k), nil
}

// APIKeyPatch changes what is set of a key.
type APIKeyPatch struct {
	// Origins replaces a pk key's allowed origins.
	Origins *[]string
}

// Update changes a pk key's allowed origins; the key itself stays
// the same, so the pages that embed it keep working on the origins still
// allowed.
func (a APIKeys) Update(ctx context.Context, p *Principal, tenant, keyID string, in APIKeyPatch) (APIKey, error) {
	s := a.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjKeys, auth.ActWrite)
	if err != nil {
		return APIKey{}, err
	}
	k, err := s.store.Tenant(t.ID).Keys().Get(ctx, keyID)
	if err != nil {
		return APIKey{}, s.storeErr(ctx, "update api key", "api key", "", err)
	}
	var ps problems
	var origins store.StringList
	switch {
	case in.Origins == nil:
		ps.add("", "nothing to change: give origins")
	case k.Kind != auth.KindPublishable:
		ps.add("/origins", "only pk keys are bound to origins")
	case k.RevokedAt != nil:
		ps.add("", "the key is revoked")
	default:
		origins = checkOrigins(&ps, *in.Origins)
	}
	if err := ps.err(); err != nil {
		return APIKey{}, err
	}
	before := k.Origins
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		if k, err = tx.Tenant(t.ID).Keys().SetOrigins(ctx, keyID, origins); err != nil {
			return auditRecord{}, err
		}
		detail := keyDetail(k)
		detail["origins"], detail["previous_origins"] = k.Origins, before
		return auditRecord{action: AuditKeyUpdated, target: k.ID, detail: detail}, nil
	})
	if err != nil {
		return APIKey{}, s.storeErr(ctx, "update api key", "api key", "", err)
	}
	return keyView(k), nil
}

// keyDetail describes a key in the audit log: never its secret or hash.
func keyDetail(k *store.APIKey) map[string]any {
	return map[string]any{"name": k.Name, "kind": k.Kind, "scopes": k.Scopes, "prefix": k.Prefix, "last4": k.Last4}
}
