package platform

import (
	"context"
	"errors"
	"net/url"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/identity"
	"github.com/parleyhq/parley/pkg/store"
)

// Identities is a tenant's end-user identity settings (signed user tokens): reach it with Service.Identities().
type Identities struct{ svc *Service }

// Identities returns a tenant's end-user identity settings (signed user tokens).
func (s *Service) Identities() Identities { return Identities{s} }

// Bounds of a tenant's identity settings.
const (
	// MinIdentitySecret is the shortest HS256 secret accepted: RFC 7518
	// asks for a key at least as long as the hash (256 bits).
	MinIdentitySecret = 32
	maxIdentityURL    = 2048
	maxAudience       = 256
)

// identitySealName is the name the identity secret is sealed under; no
// tenant secret can have it (secret names are identifiers).
const identitySealName = "identity:secret"

// IdentityInput is PUT /identity: how the tenant's signed end-user tokens
// are verified, Secret (HS256) or JWKSURL (RS256/ES256), and the audience
// they must name (optional).
type IdentityInput struct {
	Secret   string
	JWKSURL  string
	Audience string
}

// identityView is a tenant's identity settings as callers see them: never
// the secret, only whether there is one.
func identityView(ti *store.TenantIdentity) apiclient.Identity {
	return apiclient.Identity{HasSecret: len(ti.Ciphertext) > 0, JWKSURL: ti.JWKSURL, Audience: ti.Audience, UpdatedAt: ti.UpdatedAt}
}

// Put replaces the tenant's identity settings; the secret is
// sealed before it reaches the store and is never returned.
func (i Identities) Put(ctx context.Context, p *Principal, tenant string, in IdentityInput) (apiclient.Identity, error) {
	s := i.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjSecrets, auth.ActWrite)
	if err != nil {
		return apiclient.Identity{}, err
	}
	var ps problems
	switch {
	case (in.Secret == "") == (in.JWKSURL == ""):
		ps.add("", "give exactly one of secret (HS256) or jwks_url (RS256/ES256)")
	case in.Secret != "" && len(in.Secret) < MinIdentitySecret:
		ps.add("/secret", "must be at least %d bytes; generate it randomly, e.g. openssl rand -base64 48", MinIdentitySecret)
	case len(in.Secret) > MaxSecretSize:
		ps.add("/secret", "must be at most %d bytes", MaxSecretSize)
	case in.JWKSURL != "":
		if u, err := url.Parse(in.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || len(in.JWKSURL) > maxIdentityURL {
			ps.add("/jwks_url", "must be an http(s) URL of at most %d characters", maxIdentityURL)
		}
	}
	if len(in.Audience) > maxAudience {
		ps.add("/audience", "must be at most %d characters", maxAudience)
	}
	if err := ps.err(); err != nil {
		return apiclient.Identity{}, err
	}
	ti := store.TenantIdentity{TenantID: t.ID, JWKSURL: in.JWKSURL, Audience: in.Audience}
	if in.Secret != "" {
		if ti.Nonce, ti.Ciphertext, err = s.opts.Sealer.Seal(t.ID, identitySealName, []byte(in.Secret)); err != nil {
			return apiclient.Identity{}, s.internal(ctx, "seal identity secret", err)
		}
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		detail := map[string]any{"kind": "hs256_secret"}
		if ti.JWKSURL != "" {
			detail = map[string]any{"kind": "jwks", "jwks_url": ti.JWKSURL}
		}
		if ti.Audience != "" {
			detail["audience"] = ti.Audience
		}
		return auditRecord{action: AuditIdentitySet, detail: detail}, tx.Tenant(ti.TenantID).Identity().Put(ctx, &ti)
	})
	if err != nil {
		return apiclient.Identity{}, s.internal(ctx, "put identity", err)
	}
	return identityView(&ti), nil
}

// Get returns the tenant's identity settings.
func (i Identities) Get(ctx context.Context, p *Principal, tenant string) (apiclient.Identity, error) {
	s := i.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjSecrets, auth.ActRead)
	if err != nil {
		return apiclient.Identity{}, err
	}
	ti, err := s.store.Tenant(t.ID).Identity().Get(ctx)
	if err != nil {
		return apiclient.Identity{}, s.storeErr(ctx, "get identity", "identity settings", "", err)
	}
	return identityView(&ti), nil
}

// Delete removes the tenant's identity settings: signed user
// tokens are refused from then on.
func (i Identities) Delete(ctx context.Context, p *Principal, tenant string) error {
	s := i.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjSecrets, auth.ActWrite)
	if err != nil {
		return err
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditIdentityDeleted}, tx.Tenant(t.ID).Identity().Delete(ctx)
	})
	return s.storeErr(ctx, "delete identity", "identity settings", "", err)
}

// Settings returns how the tenant's (by id) tokens are verified,
// the secret opened, for the dialog runtime; a tenant without settings
// gets zero Settings. It takes no Principal: never for an API handler.
func (i Identities) Settings(ctx context.Context, tenantID string) (identity.Settings, error) {
	s := i.svc
	ti, err := s.store.Tenant(tenantID).Identity().Get(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return identity.Settings{}, nil
	}
	if err != nil {
		return identity.Settings{}, s.internal(ctx, "identity settings", err)
	}
	out := identity.Settings{JWKSURL: ti.JWKSURL, Audience: ti.Audience}
	if len(ti.Ciphertext) > 0 {
		if out.Secret, err = s.opts.Sealer.Open(tenantID, identitySealName, ti.Nonce, ti.Ciphertext); err != nil {
			return identity.Settings{}, s.internal(ctx, "identity settings: open", errors.Join(err, errors.New("was PARLEY_SECRET_KEY changed?")))
		}
	}
	return out, nil
}
