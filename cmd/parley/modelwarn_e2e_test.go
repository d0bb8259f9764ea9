package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// TestSavingAConfigWarnsOfModelsItsProviderDoesNotList runs the real
// program with a default provider at a private URL (no model list), the
// anthropic provider at its public API (the catalog's Claude models) and
// a tenant provider that lists its models. Saving and validating warn,
// with a pointer, of a model a list lacks, and save anyway; a known model
// and a provider without a list warn of nothing; an unknown provider is
// still an error.
func TestSavingAConfigWarnsOfModelsItsProviderDoesNotList(t *testing.T) {
	t.Parallel()
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		chatServer(t, env, llmtest.Options{})
		env["PARLEY_ANTHROPIC_API_KEY"] = "sk-ant-never-used" // base URL stays https://api.anthropic.com
		srv := startParley(t, env)
		ctx := context.Background()
		admin := newTenantClient(t, srv.URL, "acme")
		if _, err := admin.PutSecret(ctx, "acme", "gw_key", "sk-gw"); err != nil {
			t.Fatal(err)
		}
		gw, err := admin.PutProvider(ctx, "acme", "gateway", apiclient.PutProviderRequest{Kind: "openai",
			BaseURL: "https://gw.acme.example/v1", APIKeySecret: "gw_key", Models: []string{"acme-large", "acme-small"}})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(gw.Models, ",") != "acme-large,acme-small" {
			t.Fatalf("provider models = %v", gw.Models)
		}
		if _, err := admin.CreateBot(ctx, "acme", "support", json.RawMessage(`{"basic_settings": {"name": "Support"}}`)); err != nil {
			t.Fatal(err)
		}

		cases := []struct {
			name, llm string
			want      []string // pointers warned about
		}{
			{"a model the tenant's provider does not list", `{"provider": "gateway", "model": "acme-huge"}`, []string{"/llm/model"}},
			{"a listed model and a dated variant of one", `{"provider": "gateway", "model": "acme-large", "fallback_models": ["acme-small-2025-01"]}`, nil},
			{"a fallback's Claude model the catalog does not have", `{"model": "anything-goes", "fallbacks": [{"provider": "anthropic", "model": "claude-unheard-of"}, {"provider": "anthropic", "model": "claude-sonnet-4-5"}]}`, []string{"/llm/fallbacks/0/model"}},
			{"any model of the default provider, which has no list", `{"model": "whatever-the-private-server-has"}`, nil},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				config := json.RawMessage(`{"basic_settings": {"name": "Support"}, "llm": ` + c.llm + `}`)
				v, err := admin.CreateVersion(ctx, "acme", "support", config)
				if err != nil {
					t.Fatalf("save: %v (a warning must not refuse it)", err)
				}
				if got := pointers(v.Warnings); got != strings.Join(c.want, " ") {
					t.Errorf("save warnings = %+v, want pointers %v", v.Warnings, c.want)
				}
				res, err := admin.ValidateFor(ctx, "acme", config)
				if err != nil {
					t.Fatal(err)
				}
				if !res.Valid || len(res.Errors) != 0 || pointers(res.Warnings) != strings.Join(c.want, " ") {
					t.Errorf("validate = valid %v, errors %+v, warnings %+v; want valid with pointers %v", res.Valid, res.Errors, res.Warnings, c.want)
				}
				for _, w := range v.Warnings {
					if !strings.Contains(w.Message, "is not among") {
						t.Errorf("warning message %q does not say what is wrong", w.Message)
					}
				}
			})
		}

		t.Run("an unknown provider is an error with its pointer, on save and validate", func(t *testing.T) {
			config := json.RawMessage(`{"basic_settings": {"name": "Support"}, "llm": {"fallbacks": [{"provider": "nobody", "model": "x"}]}}`)
			_, err := admin.CreateVersion(ctx, "acme", "support", config)
			var apiErr *apiclient.Error
			if !errors.As(err, &apiErr) || apiErr.Code != apiclient.CodeInvalid || pointers(apiErr.Details) != "/llm/fallbacks/0/provider" {
				t.Errorf("save = %v, want invalid at /llm/fallbacks/0/provider", err)
			}
			res, err := admin.ValidateFor(ctx, "acme", config)
			if err != nil || res.Valid || pointers(res.Errors) != "/llm/fallbacks/0/provider" {
				t.Errorf("validate = %+v, %v; want invalid at /llm/fallbacks/0/provider", res, err)
			}
		})

		t.Run("without a tenant only the default provider's list is known", func(t *testing.T) {
			res, err := admin.Validate(ctx, json.RawMessage(`{"basic_settings": {"name": "Support"}, "llm": {"provider": "gateway", "model": "acme-huge"}}`))
			if err != nil || !res.Valid || res.Warnings == nil || len(res.Warnings) != 0 {
				t.Errorf("validate without tenant = %+v, %v; want valid, warnings []", res, err)
			}
		})

		t.Run("another tenant's providers are not this tenant's", func(t *testing.T) {
			_, err := newTenantClient(t, srv.URL, "globex").ValidateFor(ctx, "acme", json.RawMessage(`{"basic_settings": {"name": "x"}}`))
			var apiErr *apiclient.Error
			if !errors.As(err, &apiErr) || apiErr.Code != apiclient.CodeNotFound {
				t.Errorf("validate for another tenant = %v, want not_found", err)
			}
		})
	})
}

// newTenantClient creates a tenant on the server at base and returns a
// client with its first admin key.
func newTenantClient(t *testing.T, base, slug string) *apiclient.Client {
	t.Helper()
	created, err := apiclient.New(base, e2eToken).CreateTenant(context.Background(), apiclient.CreateTenantRequest{Slug: slug, Name: slug})
	if err != nil {
		t.Fatal(err)
	}
	return apiclient.New(base, created.APIKey.Key)
}

// pointers joins the details' pointers with spaces.
func pointers(ds []apiclient.Detail) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Pointer
	}
	return strings.Join(out, " ")
}
