package platform

import (
	"context"
	"strings"

	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/store"
)

// Tenants is the tenants: the platform operator's: reach it with Service.Tenants().
type Tenants struct{ svc *Service }

// Tenants returns the tenants: the platform operator's.
func (s *Service) Tenants() Tenants { return Tenants{s} }

// CreateTenantInput describes a new tenant. OwnerEmail, when set, makes that
// user (created with OwnerPassword if new) the tenant's owner, so the admin
// UI has someone to sign in as.
type CreateTenantInput struct {
	Slug          string
	Name          string
	OwnerEmail    string
	OwnerPassword string
}

// Create creates a tenant with a first admin key (sk_, scope admin),
// returned in plaintext this once. Only the platform operator may do it.
// The tenant, key and owner are created together or not at all.
func (te Tenants) Create(ctx context.Context, p *Principal, in CreateTenantInput) (Tenant, CreatedKey, error) {
	s := te.svc
	if err := requirePlatform(p); err != nil {
		return Tenant{}, CreatedKey{}, err
	}
	var ps problems
	ps.slug("/slug", in.Slug)
	if strings.TrimSpace(in.Name) == "" {
		in.Name = in.Slug
	}
	ps.name("/name", in.Name, 200)
	if err := ps.err(); err != nil {
		return Tenant{}, CreatedKey{}, err
	}
	// Hash before the transaction: bcrypt is slow and SQLite has one writer.
	owner, err := s.Users().prepareOwner(ctx, in)
	if err != nil {
		return Tenant{}, CreatedKey{}, err
	}
	gen, err := auth.GenerateAPIKey(auth.KindSecret)
	if err != nil {
		return Tenant{}, CreatedKey{}, s.internal(ctx, "create tenant: key", err)
	}

	t := store.Tenant{Slug: in.Slug, Name: strings.TrimSpace(in.Name)}
	k := store.APIKey{Name: "first admin key", Kind: auth.KindSecret, Scopes: store.StringList{auth.ScopeAdmin},
		Hash: gen.Hash, Prefix: gen.Prefix, Last4: gen.Last4}
	err = s.store.Tx(ctx, func(tx *store.Store) error {
		if err := tx.Tenants().Create(ctx, &t); err != nil {
			return s.storeErr(ctx, "create tenant", "tenant", "a tenant with slug "+in.Slug+" already exists", err)
		}
		k.TenantID = t.ID
		if err := tx.Tenant(k.TenantID).Keys().Create(ctx, &k); err != nil {
			return s.internal(ctx, "create tenant: key", err)
		}
		return s.Users().addOwner(ctx, tx, t.ID, owner)
	})
	if err != nil {
		return Tenant{}, CreatedKey{}, err
	}
	return tenantView(&t), CreatedKey{APIKey: keyView(&k), Key: gen.Plaintext}, nil
}

// List lists every tenant for the operator, and the tenants a user
// belongs to (or a key's own tenant) for everyone else.
func (t Tenants) List(ctx context.Context, p *Principal, opts ListOptions) ([]Tenant, string, error) {
	s := t.svc
	if p == nil {
		return nil, "", unauthorized("authentication required")
	}
	if !p.IsPlatform() {
		return s.Tenants().ownTenants(ctx, p)
	}
	rows, next, err := s.store.Tenants().List(ctx, opts.page())
	if err != nil {
		return nil, "", s.storeErr(ctx, "list tenants", "tenant", "", err)
	}
	return mapSlice(rows, tenantView), next, nil
}

// ownTenants is the short, unpaged list of tenants p can act in.
func (te Tenants) ownTenants(ctx context.Context, p *Principal) ([]Tenant, string, error) {
	s := te.svc
	var ids []string
	if p.Kind == KindKey {
		ids = []string{p.TenantID}
	}
	for id := range p.Roles {
		ids = append(ids, id)
	}
	out := make([]Tenant, 0, len(ids))
	for _, id := range ids {
		t, err := s.store.Tenants().Get(ctx, id)
		if err != nil {
			return nil, "", s.storeErr(ctx, "list own tenants", "tenant", "", err)
		}
		out = append(out, tenantView(t))
	}
	return out, "", nil
}

// Get returns a tenant by id or slug.
func (te Tenants) Get(ctx context.Context, p *Principal, tenant string) (Tenant, error) {
	s := te.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjTenant, auth.ActRead)
	if err != nil {
		return Tenant{}, err
	}
	return tenantView(t), nil
}
