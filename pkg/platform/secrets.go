package platform

import (
	"context"
	"errors"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/store"
)

// Secrets is a tenant's secrets: reach it with Service.Secrets().
type Secrets struct{ svc *Service }

// Secrets returns a tenant's secrets.
func (s *Service) Secrets() Secrets { return Secrets{s} }

// MaxSecretSize caps one secret value; secrets are tokens and passwords, not
// documents.
const MaxSecretSize = 16 << 10

// Put creates or replaces the tenant's secret, encrypted before it
// reaches the store. Secrets are write-only: nothing returns the value
// except SecretVars, for the runtime.
func (se Secrets) Put(ctx context.Context, p *Principal, tenant, name, value string) (apiclient.Secret, error) {
	s := se.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjSecrets, auth.ActWrite)
	if err != nil {
		return apiclient.Secret{}, err
	}
	var ps problems
	checkSecretName(&ps, name)
	switch {
	case value == "":
		ps.add("/value", "is required")
	case len(value) > MaxSecretSize:
		ps.add("/value", "must be at most %d bytes", MaxSecretSize)
	}
	if err := ps.err(); err != nil {
		return apiclient.Secret{}, err
	}
	nonce, ct, err := s.opts.Sealer.Seal(t.ID, name, []byte(value))
	if err != nil {
		return apiclient.Secret{}, s.internal(ctx, "seal secret", err)
	}
	sec := store.Secret{TenantID: t.ID, Name: name, Nonce: nonce, Ciphertext: ct}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditSecretSet, target: name}, tx.Tenant(sec.TenantID).Secrets().Put(ctx, &sec)
	})
	if err != nil {
		return apiclient.Secret{}, s.internal(ctx, "put secret", err)
	}
	return apiclient.Secret{Name: sec.Name, UpdatedAt: sec.UpdatedAt}, nil
}

func checkSecretName(ps *problems, name string) {
	if !secretNamePattern.MatchString(name) {
		ps.add("/name", "must be 1-128 letters, digits or underscores, not starting with a digit, so configs can use {{secrets.NAME}}")
	}
}

// ListNames lists the tenant's secret names, never their values.
func (se Secrets) ListNames(ctx context.Context, p *Principal, tenant string) ([]apiclient.Secret, error) {
	s := se.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjSecrets, auth.ActRead)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.Tenant(t.ID).Secrets().List(ctx)
	if err != nil {
		return nil, s.internal(ctx, "list secrets", err)
	}
	return mapSlice(rows, func(r *store.Secret) apiclient.Secret {
		return apiclient.Secret{Name: r.Name, UpdatedAt: r.UpdatedAt}
	}), nil
}

// Delete removes the tenant's secret.
func (se Secrets) Delete(ctx context.Context, p *Principal, tenant, name string) error {
	s := se.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjSecrets, auth.ActWrite)
	if err != nil {
		return err
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditSecretDeleted, target: name}, tx.Tenant(t.ID).Secrets().Delete(ctx, name)
	})
	return s.storeErr(ctx, "delete secret", "secret", "", err)
}

// Vars decrypts the tenant's (by id) secrets with these names for
// the runtime, keyed "secrets.NAME" (botconfig.SecretPrefix) as
// botconfig.Vars expects; a name the tenant has no secret for is left out.
// It takes no Principal: it is for the platform's own dialog runner, never
// for an API handler. A secret that fails to decrypt (wrong key) is an
// internal error rather than a silently missing value. Without names it
// reads nothing: most bots use no secret, and a turn then saves the query.
func (se Secrets) Vars(ctx context.Context, tenantID string, names []string) (map[string]string, error) {
	s := se.svc
	if len(names) == 0 {
		return map[string]string{}, nil
	}
	rows, err := s.store.Tenant(tenantID).Secrets().Get(ctx, names)
	if err != nil {
		return nil, s.internal(ctx, "secret vars", err)
	}
	vars := make(map[string]string, len(rows))
	for _, r := range rows {
		plain, err := s.opts.Sealer.Open(tenantID, r.Name, r.Nonce, r.Ciphertext)
		if err != nil {
			return nil, s.internal(ctx, "secret vars: open "+r.Name, errors.Join(err, errors.New("was PARLEY_SECRET_KEY changed?")))
		}
		vars[botconfig.SecretPrefix+r.Name] = string(plain)
	}
	return vars, nil
}
