package apply

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// ssoFile is tenant.json's "sso": PUT /sso with the client secret named
// by an environment variable (client_secret_env), never written in git.
type ssoFile struct {
	Issuer          string   `json:"issuer"`
	ClientID        string   `json:"client_id"`
	ClientSecretEnv string   `json:"client_secret_env,omitempty"`
	DefaultRole     string   `json:"default_role,omitempty"`
	AllowedDomains  []string `json:"allowed_domains,omitempty"`
	RequireSSO      bool     `json:"require_sso,omitempty"`
}

// ssoSpec is a checked ssoFile with the secret read from its variable.
type ssoSpec struct {
	file   ssoFile
	secret string
}

// same reports whether the live settings are the file's (the secret
// aside, which is write-only).
func (f ssoFile) same(live ssoFile) bool {
	return f.Issuer == live.Issuer && f.ClientID == live.ClientID && f.DefaultRole == live.DefaultRole &&
		f.RequireSSO == live.RequireSSO && slices.Equal(normalDomains(f.AllowedDomains), normalDomains(live.AllowedDomains))
}

func normalDomains(ds []string) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, strings.ToLower(strings.TrimSpace(d)))
	}
	slices.Sort(out)
	return out
}

// readSSO checks tenant.json's sso and reads its secret's variable.
func readSSO(file string, f *ssoFile, getenv func(string) string, ps []Problem) (*ssoSpec, []Problem) {
	if f == nil {
		return nil, ps
	}
	if f.Issuer == "" {
		ps = append(ps, Problem{file, "/sso/issuer", "is required: the provider's issuer URL"})
	}
	if f.ClientID == "" {
		ps = append(ps, Problem{file, "/sso/client_id", "is required"})
	}
	f.Issuer = strings.TrimRight(f.Issuer, "/")
	spec := &ssoSpec{file: *f}
	if f.ClientSecretEnv != "" {
		if spec.secret = getenv(f.ClientSecretEnv); spec.secret == "" {
			ps = append(ps, Problem{file, "/sso/client_secret_env", fmt.Sprintf("environment variable %s is not set", f.ClientSecretEnv)})
		}
	}
	return spec, ps
}

// sso sets the tenant's single sign-on from tenant.json unless it is so
// already; a client secret named in the file is set every time, like the
// tenant's secrets (it is write-only, so apply cannot compare it).
func (a *applier) sso(ctx context.Context, t Tenant, exists bool) {
	if t.sso == nil {
		return
	}
	want := t.sso.file
	if exists {
		got, _, found, err := a.target.sso(ctx, t.slug)
		if err != nil {
			a.fail(t.file, err)
			return
		}
		if found && want.same(got) && t.sso.secret == "" {
			fmt.Fprintf(a.out, "  sso: unchanged\n")
			return
		}
	}
	what := fmt.Sprintf("provider %s, client %s", want.Issuer, want.ClientID)
	if want.ClientSecretEnv != "" {
		what += ", secret from $" + want.ClientSecretEnv
	}
	if want.DefaultRole != "" {
		what += fmt.Sprintf(", new people from %s join as %s", strings.Join(want.AllowedDomains, ", "), want.DefaultRole)
	}
	if want.RequireSSO {
		what += ", SSO required"
	}
	if a.dryRun {
		fmt.Fprintf(a.out, "  sso: would be set: %s\n", what)
		return
	}
	if err := a.target.putSSO(ctx, t.slug, want, t.sso.secret); err != nil {
		a.fail(t.file, err)
		return
	}
	fmt.Fprintf(a.out, "  sso: set: %s\n", what)
}

// twoFactor sets whether the tenant requires two-factor from
// tenant.json unless it is so already.
func (a *applier) twoFactor(ctx context.Context, t Tenant, exists bool) {
	if t.requireTwoFactor == nil {
		return
	}
	on := *t.requireTwoFactor
	if exists {
		cur, err := a.target.requireTwoFactor(ctx, t.slug)
		if err != nil {
			a.fail(t.file, err)
			return
		}
		if cur == on {
			return
		}
	} else if !on {
		return
	}
	if a.dryRun {
		fmt.Fprintf(a.out, "  two-factor: would be required=%t\n", on)
		return
	}
	if err := a.target.setRequireTwoFactor(ctx, t.slug, on); err != nil {
		a.fail(t.file, err)
		return
	}
	fmt.Fprintf(a.out, "  two-factor: required=%t\n", on)
}

func (d dbTarget) sso(ctx context.Context, tenant string) (ssoFile, bool, bool, error) {
	got, err := d.svc.SingleSignOn().GetSSO(ctx, d.op, tenant)
	if platform.ErrorCode(err) == platform.CodeNotFound {
		return ssoFile{}, false, false, nil
	}
	return ssoFile{Issuer: got.Issuer, ClientID: got.ClientID, DefaultRole: got.DefaultRole, AllowedDomains: got.AllowedDomains,
		RequireSSO: got.RequireSSO}, got.HasSecret, err == nil, err
}

func (d dbTarget) putSSO(ctx context.Context, tenant string, want ssoFile, secret string) error {
	_, err := d.svc.SingleSignOn().PutSSO(ctx, d.op, tenant, platform.SSOInput{Issuer: want.Issuer, ClientID: want.ClientID,
		ClientSecret: secret, DefaultRole: want.DefaultRole, AllowedDomains: want.AllowedDomains, RequireSSO: want.RequireSSO})
	return err
}

func (d dbTarget) requireTwoFactor(ctx context.Context, tenant string) (bool, error) {
	t, err := d.svc.Tenants().Get(ctx, d.op, tenant)
	return t.RequireTwoFactor, err
}

func (d dbTarget) setRequireTwoFactor(ctx context.Context, tenant string, on bool) error {
	_, err := d.svc.Tenants().Update(ctx, d.op, tenant, platform.UpdateTenantInput{RequireTwoFactor: &on})
	return err
}

func (a apiTarget) sso(ctx context.Context, tenant string) (ssoFile, bool, bool, error) {
	got, err := a.c.GetSSO(ctx, tenant)
	if apiStatus(err) == http.StatusNotFound {
		return ssoFile{}, false, false, nil
	}
	if err != nil {
		return ssoFile{}, false, false, err
	}
	return ssoFile{Issuer: got.Issuer, ClientID: got.ClientID, DefaultRole: got.DefaultRole, AllowedDomains: got.AllowedDomains,
		RequireSSO: got.RequireSSO}, got.HasSecret, true, nil
}

func (a apiTarget) putSSO(ctx context.Context, tenant string, want ssoFile, secret string) error {
	_, err := a.c.PutSSO(ctx, tenant, apiclient.PutSSORequest{Issuer: want.Issuer, ClientID: want.ClientID, ClientSecret: secret,
		DefaultRole: want.DefaultRole, AllowedDomains: want.AllowedDomains, RequireSSO: want.RequireSSO})
	return err
}

func (a apiTarget) requireTwoFactor(ctx context.Context, tenant string) (bool, error) {
	t, err := a.c.GetTenant(ctx, tenant)
	if err != nil {
		return false, err
	}
	return t.RequireTwoFactor, nil
}

func (a apiTarget) setRequireTwoFactor(ctx context.Context, tenant string, on bool) error {
	return a.c.Do(ctx, http.MethodPatch, "/v1/tenants/"+tenant, apiclient.UpdateTenantRequest{RequireTwoFactor: &on}, nil)
}
