package apiclient

import (
	"context"
	"net/http"
	"time"
)

// PutProviderRequest is the body of PUT /v1/tenants/{tenant}/providers/{name}:
// a model provider the tenant's bots may name in llm.provider and
// llm.fallbacks. The API key is a tenant secret, named here, never sent.
type PutProviderRequest struct {
	// Kind is "openai" (any OpenAI-compatible API) or "anthropic".
	Kind string `json:"kind"`
	// BaseURL defaults to the kind's public API.
	BaseURL string `json:"base_url,omitempty"`
	// APIKeySecret names the tenant secret holding the API key.
	APIKeySecret string `json:"api_key_secret,omitempty"`
	// Headers are sent with every call (not for keys: those go in secrets).
	Headers map[string]string `json:"headers,omitempty"`
	// Models, when listed, are the models the provider serves: saving a
	// config that asks it for another model answers a warning.
	Models []string `json:"models,omitempty"`
}

// Provider is a tenant's model provider.
type Provider struct {
	Name         string            `json:"name"`
	Kind         string            `json:"kind"`
	BaseURL      string            `json:"base_url"`
	APIKeySecret string            `json:"api_key_secret,omitempty"`
	Headers      map[string]string `json:"headers,omitempty"`
	Models       []string          `json:"models,omitempty"`
	UpdatedAt    time.Time         `json:"updated_at"`
}

// ProviderList is every provider of a tenant.
type ProviderList struct {
	Providers []Provider `json:"providers"`
}

// PutProvider creates or replaces a tenant's model provider.
func (c *Client) PutProvider(ctx context.Context, tenant, name string, req PutProviderRequest) (*Provider, error) {
	var out Provider
	return &out, c.Do(ctx, http.MethodPut, tenantPath(tenant, "providers", name), req, &out)
}

// ListProviders lists a tenant's model providers.
func (c *Client) ListProviders(ctx context.Context, tenant string) (*ProviderList, error) {
	var out ProviderList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "providers"), nil, &out)
}

// DeleteProvider deletes a tenant's model provider.
func (c *Client) DeleteProvider(ctx context.Context, tenant, name string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "providers", name), nil, nil)
}
