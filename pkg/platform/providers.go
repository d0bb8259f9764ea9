package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/store"
)

// Providers is a tenant's model providers: reach it with Service.Providers().
type Providers struct{ svc *Service }

// Providers returns a tenant's model providers.
func (s *Service) Providers() Providers { return Providers{s} }

// Provider kinds a tenant may configure.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
)

// providerNamePattern is what llm.provider may name (botconfig checks the
// same shape).
var providerNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidProviderName reports whether name may name a tenant provider.
func ValidProviderName(name string) bool { return providerNamePattern.MatchString(name) }

// maxProviderHeaders bounds a provider's default headers.
const maxProviderHeaders = 20

// maxProviderModels and maxModelName bound a provider's model list.
const (
	maxProviderModels = 500
	maxModelName      = 200
)

// ProviderSpec is what a tenant sets for one of its providers: the kind,
// the base URL (empty: the kind's public API), the name of the tenant
// secret holding the API key, default headers sent with every call, and
// the models it serves (empty: not listed), against which saved configs
// are warned.
type ProviderSpec struct {
	Kind         string
	BaseURL      string
	APIKeySecret string
	Headers      map[string]string
	Models       []string
}

// TenantProvider is a tenant provider ready to be built, its API key
// decrypted: for the dialog runtime only, never for an API handler.
type TenantProvider struct {
	Name string
	ProviderSpec
	APIKey string
}

// DefaultBaseURL is the public API of a provider kind.
func DefaultBaseURL(kind string) string {
	if kind == ProviderAnthropic {
		return "https://api.anthropic.com"
	}
	return "https://api.openai.com/v1"
}

// Put creates or replaces the tenant's provider. Providers send a
// tenant secret (the API key) to their base URL, so managing them takes
// the right to write secrets.
func (pr Providers) Put(ctx context.Context, p *Principal, tenant, name string, spec ProviderSpec) (apiclient.Provider, error) {
	s := pr.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjSecrets, auth.ActWrite)
	if err != nil {
		return apiclient.Provider{}, err
	}
	if spec.BaseURL == "" {
		spec.BaseURL = DefaultBaseURL(spec.Kind)
	}
	spec.BaseURL = strings.TrimRight(spec.BaseURL, "/")
	ps := checkProvider(name, spec)
	s.Providers().checkProviderURL(ctx, ps, spec.BaseURL)
	if err := ps.err(); err != nil {
		return apiclient.Provider{}, err
	}
	if spec.APIKeySecret != "" {
		rows, err := s.store.Tenant(t.ID).Secrets().Get(ctx, []string{spec.APIKeySecret})
		if err != nil {
			return apiclient.Provider{}, s.internal(ctx, "put provider: secret", err)
		}
		if len(rows) == 0 {
			return apiclient.Provider{}, Invalid(Detail{Pointer: "/api_key_secret",
				Message: fmt.Sprintf("the tenant has no secret named %q; put it first (PUT /secrets/%s)", spec.APIKeySecret, spec.APIKeySecret)})
		}
	}
	headers, _ := json.Marshal(spec.Headers)
	models, _ := json.Marshal(spec.Models)
	row := store.Provider{TenantID: t.ID, Name: name, Kind: spec.Kind, BaseURL: spec.BaseURL,
		APIKeySecret: spec.APIKeySecret, Headers: string(headers), Models: string(models)}
	if spec.Headers == nil {
		row.Headers = "{}"
	}
	if len(spec.Models) == 0 {
		row.Models = "[]"
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditProviderSet, target: name, detail: map[string]any{"kind": row.Kind, "base_url": row.BaseURL,
			"api_key_secret": row.APIKeySecret, "models": len(spec.Models)}}, tx.Tenant(row.TenantID).Providers().Put(ctx, &row)
	})
	if err != nil {
		return apiclient.Provider{}, s.internal(ctx, "put provider", err)
	}
	return wireProvider(&row), nil
}

func checkProvider(name string, spec ProviderSpec) *problems {
	var ps problems
	if !providerNamePattern.MatchString(name) {
		ps.add("/name", "must be 1-64 letters, digits, '_' or '-', as llm.provider names it")
	}
	if spec.Kind != ProviderOpenAI && spec.Kind != ProviderAnthropic {
		ps.add("/kind", "must be openai (an OpenAI-compatible API) or anthropic")
	}
	if u, err := url.Parse(spec.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		ps.add("/base_url", "must be an http(s) URL without credentials, such as %s", DefaultBaseURL(spec.Kind))
	}
	if spec.APIKeySecret != "" && !secretNamePattern.MatchString(spec.APIKeySecret) {
		ps.add("/api_key_secret", "must name a tenant secret")
	}
	if len(spec.Headers) > maxProviderHeaders {
		ps.add("/headers", "at most %d headers", maxProviderHeaders)
	}
	if len(spec.Models) > maxProviderModels {
		ps.add("/models", "at most %d models", maxProviderModels)
	}
	for i, m := range spec.Models {
		switch {
		case strings.TrimSpace(m) == "":
			ps.add(fmt.Sprintf("/models/%d", i), "a model name is empty")
		case len(m) > maxModelName:
			ps.add(fmt.Sprintf("/models/%d", i), "at most %d characters", maxModelName)
		case slices.Index(spec.Models, m) < i:
			ps.add(fmt.Sprintf("/models/%d", i), "%q is listed twice", m)
		}
	}
	for k, v := range spec.Headers {
		at := "/headers/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
		switch lk := strings.ToLower(k); {
		case k == "" || strings.ContainsAny(k, " :\r\n\t") || http.CanonicalHeaderKey(k) == "":
			ps.add(at, "is not a header name")
		case lk == "authorization" || lk == "x-api-key" || lk == "api-key":
			// Headers are stored as given; a key belongs in a secret.
			ps.add(at, "carries the API key; put the key in a tenant secret and name it in api_key_secret")
		case strings.ContainsAny(v, "\r\n"):
			ps.add(at, "must not contain line breaks")
		}
	}
	return &ps
}

// checkProviderURL refuses a base URL whose destination the outbound
// policy denies (a private, loopback or metadata address, a port not
// allowed) when it is saved, as a webhook's URL is: every call there would
// be refused after its retries. A name that does not resolve now is let
// through: a DNS failure may pass, and every call checks the address it
// dials.
func (p Providers) checkProviderURL(ctx context.Context, ps *problems, raw string) {
	s := p.svc
	if s.opts.OutboundPolicy == nil || slices.ContainsFunc(*ps, func(d Detail) bool { return d.Pointer == "/base_url" }) {
		return
	}
	err := outbound.CheckURL(ctx, *s.opts.OutboundPolicy, outbound.Options{}, raw)
	if denied := (*outbound.DeniedError)(nil); errors.As(err, &denied) {
		ps.add("/base_url", "%s", outboundProblem(err))
	}
}

// List lists the tenant's providers, with the names of their key
// secrets and never the keys.
func (pr Providers) List(ctx context.Context, p *Principal, tenant string) ([]apiclient.Provider, error) {
	s := pr.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjSecrets, auth.ActRead)
	if err != nil {
		return nil, err
	}
	rows, err := s.store.Tenant(t.ID).Providers().List(ctx)
	if err != nil {
		return nil, s.internal(ctx, "list providers", err)
	}
	return mapSlice(rows, wireProvider), nil
}

// Delete removes the tenant's provider. Bots that name it fail
// over to their fallbacks, or answer with an error, until they are changed.
func (pr Providers) Delete(ctx context.Context, p *Principal, tenant, name string) error {
	s := pr.svc
	t, err := s.Auth().tenantFor(ctx, p, tenant, auth.ObjSecrets, auth.ActWrite)
	if err != nil {
		return err
	}
	err = s.AuditLog().audited(ctx, p, t.ID, func(tx *store.Store) (auditRecord, error) {
		return auditRecord{action: AuditProviderDeleted, target: name}, tx.Tenant(t.ID).Providers().Delete(ctx, name)
	})
	return s.storeErr(ctx, "delete provider", "provider", "", err)
}

// OfTenant returns the tenant's (by id) providers with these names,
// each with its API key decrypted from the tenant's secret; names the
// tenant has no provider for are left out. Like SecretVars it takes no
// Principal: it is for the dialog runtime only.
func (p Providers) OfTenant(ctx context.Context, tenantID string, names []string) ([]TenantProvider, error) {
	s := p.svc
	rows, err := s.store.Tenant(tenantID).Providers().Get(ctx, names)
	if err != nil || len(rows) == 0 {
		if err != nil {
			return nil, s.internal(ctx, "tenant providers", err)
		}
		return nil, nil
	}
	var secrets []string
	for _, r := range rows {
		if r.APIKeySecret != "" {
			secrets = append(secrets, r.APIKeySecret)
		}
	}
	vars, err := s.Secrets().Vars(ctx, tenantID, secrets)
	if err != nil {
		return nil, err
	}
	out := make([]TenantProvider, 0, len(rows))
	for i := range rows {
		out = append(out, TenantProvider{Name: rows[i].Name, ProviderSpec: providerSpec(&rows[i]),
			APIKey: vars[botconfig.SecretPrefix+rows[i].APIKeySecret]})
	}
	return out, nil
}

// checkProviders refuses a config whose llm section names a provider
// neither the server nor the tenant has, with a pointer to it. Without
// Options.ServerProviders the server's names are unknown and no name is
// refused. A config it accepts may still ask a provider for a model the
// provider does not list: those are the warnings it returns (see
// modelWarnings).
func (p Providers) checkProviders(ctx context.Context, tenantID string, bot *botconfig.Bot) ([]Detail, error) {
	s := p.svc
	uses := bot.ProviderUses()
	names := make([]string, 0, len(uses))
	for _, u := range uses {
		names = append(names, u.Name)
	}
	rows, err := s.store.Tenant(tenantID).Providers().Get(ctx, names)
	if err != nil {
		return nil, s.internal(ctx, "check providers", err)
	}
	if s.opts.ServerProviders != nil {
		known := slices.Clone(s.opts.ServerProviders)
		for _, r := range rows {
			known = append(known, r.Name)
		}
		var details []Detail
		for _, u := range uses {
			if !slices.Contains(known, u.Name) {
				details = append(details, Detail{Pointer: u.Pointer, Message: fmt.Sprintf(
					"unknown provider %q; configure it (PUT /providers/%s) or use one of: %s", u.Name, u.Name, strings.Join(known, ", "))})
			}
		}
		if len(details) > 0 {
			return nil, Invalid(details...)
		}
	}
	return modelWarnings(bot, s.Providers().modelLists(rows)), nil
}

// modelLists are the model lists of the providers a tenant's bots may
// name: Options.ServerModels for the server's, and the lists of the
// tenant's providers (rows), which take a server provider's place under
// the same name as they do in dialogs.
func (p Providers) modelLists(rows []store.Provider) map[string][]string {
	s := p.svc
	models := maps.Clone(s.opts.ServerModels)
	if models == nil {
		models = map[string][]string{}
	}
	for i := range rows {
		models[rows[i].Name] = providerSpec(&rows[i]).Models
	}
	return models
}

// modelWarnings warns, with a pointer each, where the bot asks a provider
// for a model the provider's list (in models) does not have. A provider
// without a list is not checked.
func modelWarnings(bot *botconfig.Bot, models map[string][]string) []Detail {
	var out []Detail
	for _, p := range bot.UnknownModels(models) {
		out = append(out, Detail{Pointer: p.Pointer, Message: p.Message})
	}
	return out
}

// providerSpec is what a provider's row sets, its JSON columns parsed.
func providerSpec(r *store.Provider) ProviderSpec {
	var headers map[string]string
	if err := json.Unmarshal([]byte(r.Headers), &headers); err != nil || len(headers) == 0 {
		headers = nil
	}
	var models []string
	if err := json.Unmarshal([]byte(r.Models), &models); err != nil || len(models) == 0 {
		models = nil
	}
	return ProviderSpec{Kind: r.Kind, BaseURL: r.BaseURL, APIKeySecret: r.APIKeySecret, Headers: headers, Models: models}
}

// wireProvider is a tenant provider as callers see it: never the key, only
// the secret's name.
func wireProvider(r *store.Provider) apiclient.Provider {
	spec := providerSpec(r)
	return apiclient.Provider{Name: r.Name, Kind: spec.Kind, BaseURL: spec.BaseURL, APIKeySecret: spec.APIKeySecret,
		Headers: spec.Headers, Models: spec.Models, UpdatedAt: r.UpdatedAt}
}
