package apply

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/platform"
)

// providersFileName is the tenant directory's file of model providers.
const providersFileName = "providers.json"

// providerFile is one provider of providers.json, which maps provider
// names (what llm.provider names) to providers.
type providerFile struct {
	// Kind is "openai" (any OpenAI-compatible API) or "anthropic".
	Kind string `json:"kind"`
	// BaseURL defaults to the kind's public API.
	BaseURL string `json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding the API key; apply
	// keeps it in the tenant secret providerKeySecret(name).
	APIKeyEnv string            `json:"api_key_env,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
	// Models, when listed, are the models the provider serves: a bot
	// naming another model for it is warned about (not refused) when the
	// directory is checked, and by the server when a config is saved.
	Models []string `json:"models,omitempty"`
}

// providerSpec is one checked provider.
type providerSpec struct {
	name string
	providerFile
	apiKey string
}

// keySecret is the tenant secret holding the provider's API key; "" when
// the file names none.
func (p providerSpec) keySecret() string {
	if p.APIKeyEnv == "" {
		return ""
	}
	return providerKeySecret(p.name)
}

// providerKeySecret names the tenant secret apply keeps a provider's API
// key in: provider names may hold '-', secret names may not.
func providerKeySecret(name string) string {
	return "provider_" + strings.ReplaceAll(name, "-", "_") + "_api_key"
}

// baseURL is the URL the server stores for the provider.
func (p providerSpec) baseURL() string {
	if p.BaseURL == "" {
		return platform.DefaultBaseURL(p.Kind)
	}
	return strings.TrimRight(p.BaseURL, "/")
}

// liveProvider is a provider as apply compares it.
type liveProvider struct {
	kind, baseURL, apiKeySecret string
	headers                     map[string]string
	models                      []string
}

// readProviders reads and checks dir's providers.json, when there is one.
// secrets are the secret names tenant.json sets, which a provider's key
// secret must not take.
func readProviders(dir string, getenv func(string) string, secrets func(string) bool) ([]providerSpec, []Problem) {
	file, ps := readKeyedFile[providerFile](filepath.Join(dir, providersFileName))
	var specs []providerSpec
	keySecrets := map[string]string{}
	for _, name := range sortedKeys(file) {
		p, at := providerSpec{name: name, providerFile: file[name]}, "/"+name
		if !platform.ValidProviderName(name) {
			ps.add(at, "a provider's name is what llm.provider names: 1-64 letters, digits, '_' or '-'")
		}
		if p.Kind != platform.ProviderOpenAI && p.Kind != platform.ProviderAnthropic {
			ps.add(at+"/kind", "must be openai (an OpenAI-compatible API) or anthropic")
		}
		for i, m := range p.Models {
			if strings.TrimSpace(m) == "" {
				ps.add(fmt.Sprintf("%s/models/%d", at, i), "a model name is empty")
			}
		}
		if p.APIKeyEnv != "" {
			secret := p.keySecret()
			switch {
			case getenv(p.APIKeyEnv) == "":
				ps.add(at+"/api_key_env", "environment variable %s is not set", p.APIKeyEnv)
			case secrets(secret):
				ps.add(at+"/api_key_env", "the key is kept in the tenant secret %s, which tenant.json sets too; remove it there", secret)
			case keySecrets[secret] != "":
				ps.add(at, "providers %s and %s would keep their keys in the same secret %s; rename one", keySecrets[secret], name, secret)
			}
			keySecrets[secret] = name
			p.apiKey = getenv(p.APIKeyEnv)
		}
		specs = append(specs, p)
	}
	return specs, ps.ps
}

// providers makes the tenant's providers match providers.json: each key
// is set from its environment variable (as secrets are, every time),
// each provider that differs is put, and with --prune providers the file
// does not have are deleted. Run before the bots, which name them.
func (a *applier) providers(ctx context.Context, t Tenant, exists bool) {
	if len(t.providers) == 0 && !a.prune {
		return
	}
	live := map[string]liveProvider{}
	if exists {
		var err error
		if live, err = a.target.providers(ctx, t.slug); err != nil {
			a.fail(t.file, err)
			return
		}
	}
	file := filepath.Join(filepath.Dir(t.file), providersFileName)
	for _, p := range t.providers {
		if p.APIKeyEnv != "" {
			a.setSecret(ctx, t.slug, file, secretSpec{name: p.keySecret(), env: p.APIKeyEnv, value: p.apiKey})
		}
		cur, ok := live[p.name]
		want := liveProvider{kind: p.Kind, baseURL: p.baseURL(), apiKeySecret: p.keySecret(), headers: p.Headers, models: p.Models}
		verb := "created"
		if ok {
			verb = "changed"
		}
		switch {
		case ok && sameProvider(cur, want):
			fmt.Fprintf(a.out, "  provider %s: unchanged\n", p.name)
		case a.dryRun:
			a.stats.Changed++
			fmt.Fprintf(a.out, "  provider %s: would be %s (%s at %s)\n", p.name, verb, p.Kind, want.baseURL)
		default:
			if err := a.target.putProvider(ctx, t.slug, p.name, want); err != nil {
				a.fail(file, err)
				continue
			}
			a.stats.Changed++
			fmt.Fprintf(a.out, "  provider %s: %s (%s at %s)\n", p.name, verb, p.Kind, want.baseURL)
		}
	}
	if !a.prune {
		return
	}
	for _, name := range sortedKeys(live) {
		if !slices.ContainsFunc(t.providers, func(p providerSpec) bool { return p.name == name }) {
			a.remove(t.file, "provider "+name, func() error { return a.target.deleteProvider(ctx, t.slug, name) })
		}
	}
}

func sameProvider(a, b liveProvider) bool {
	return a.kind == b.kind && a.baseURL == b.baseURL && a.apiKeySecret == b.apiKeySecret &&
		maps.Equal(nonNilMap(a.headers), nonNilMap(b.headers)) && slices.Equal(a.models, b.models)
}

func (d dbTarget) providers(ctx context.Context, tenant string) (map[string]liveProvider, error) {
	list, err := d.svc.Providers().List(ctx, d.op, tenant)
	out := map[string]liveProvider{}
	for _, p := range list {
		out[p.Name] = liveProvider{kind: p.Kind, baseURL: p.BaseURL, apiKeySecret: p.APIKeySecret, headers: p.Headers, models: p.Models}
	}
	return out, err
}

func (d dbTarget) putProvider(ctx context.Context, tenant, name string, p liveProvider) error {
	_, err := d.svc.Providers().Put(ctx, d.op, tenant, name, platform.ProviderSpec{Kind: p.kind, BaseURL: p.baseURL,
		APIKeySecret: p.apiKeySecret, Headers: p.headers, Models: p.models})
	return err
}

func (d dbTarget) deleteProvider(ctx context.Context, tenant, name string) error {
	return d.svc.Providers().Delete(ctx, d.op, tenant, name)
}

func (a apiTarget) providers(ctx context.Context, tenant string) (map[string]liveProvider, error) {
	list, err := a.c.ListProviders(ctx, tenant)
	if err != nil {
		return nil, err
	}
	out := map[string]liveProvider{}
	for _, p := range list.Providers {
		out[p.Name] = liveProvider{kind: p.Kind, baseURL: p.BaseURL, apiKeySecret: p.APIKeySecret, headers: p.Headers, models: p.Models}
	}
	return out, nil
}

func (a apiTarget) putProvider(ctx context.Context, tenant, name string, p liveProvider) error {
	_, err := a.c.PutProvider(ctx, tenant, name, apiclient.PutProviderRequest{Kind: p.kind, BaseURL: p.baseURL,
		APIKeySecret: p.apiKeySecret, Headers: p.headers, Models: p.models})
	return err
}

func (a apiTarget) deleteProvider(ctx context.Context, tenant, name string) error {
	return a.c.DeleteProvider(ctx, tenant, name)
}
