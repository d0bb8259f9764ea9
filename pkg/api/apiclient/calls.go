package apiclient

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
)

// Health asks /healthz whether the process is alive.
func (c *Client) Health(ctx context.Context) error {
	return c.Do(ctx, http.MethodGet, "/healthz", nil, nil)
}

// Ready asks /readyz whether the server can reach its database.
func (c *Client) Ready(ctx context.Context) error {
	return c.Do(ctx, http.MethodGet, "/readyz", nil, nil)
}

// CreateTenant creates a tenant (platform token only) and returns its first
// admin key, shown this once.
func (c *Client) CreateTenant(ctx context.Context, req CreateTenantRequest) (*CreateTenantResponse, error) {
	var out CreateTenantResponse
	return &out, c.Do(ctx, http.MethodPost, "/v1/tenants", req, &out)
}

// ListTenants lists tenants (platform token only).
func (c *Client) ListTenants(ctx context.Context, cursor string) (*TenantList, error) {
	var out TenantList
	return &out, c.Do(ctx, http.MethodGet, withCursor("/v1/tenants", cursor), nil, &out)
}

// GetTenant returns a tenant by slug or id.
func (c *Client) GetTenant(ctx context.Context, tenant string) (*Tenant, error) {
	var out Tenant
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant), nil, &out)
}

// CreateAPIKey creates a key; its plaintext is in the answer only.
func (c *Client) CreateAPIKey(ctx context.Context, tenant string, req CreateAPIKeyRequest) (*NewAPIKey, error) {
	var out NewAPIKey
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "api-keys"), req, &out)
}

// ListAPIKeys lists a tenant's keys without their secrets.
func (c *Client) ListAPIKeys(ctx context.Context, tenant, cursor string) (*APIKeyList, error) {
	var out APIKeyList
	return &out, c.Do(ctx, http.MethodGet, withCursor(tenantPath(tenant, "api-keys"), cursor), nil, &out)
}

// UpdateAPIKey changes a pk key's allowed origins.
func (c *Client) UpdateAPIKey(ctx context.Context, tenant, id string, req UpdateAPIKeyRequest) (*APIKey, error) {
	var out APIKey
	return &out, c.Do(ctx, http.MethodPatch, tenantPath(tenant, "api-keys", id), req, &out)
}

// RevokeAPIKey revokes a key at once and returns it as revoked.
func (c *Client) RevokeAPIKey(ctx context.Context, tenant, id string) (*APIKey, error) {
	var out APIKey
	return &out, c.Do(ctx, http.MethodDelete, tenantPath(tenant, "api-keys", id), nil, &out)
}

// PutSecret creates or replaces a tenant secret.
func (c *Client) PutSecret(ctx context.Context, tenant, name, value string) (*Secret, error) {
	var out Secret
	return &out, c.Do(ctx, http.MethodPut, tenantPath(tenant, "secrets", name), PutSecretRequest{Value: value}, &out)
}

// PutIdentity sets how the tenant's signed end-user tokens are verified.
func (c *Client) PutIdentity(ctx context.Context, tenant string, req PutIdentityRequest) (*Identity, error) {
	var out Identity
	return &out, c.Do(ctx, http.MethodPut, tenantPath(tenant, "identity"), req, &out)
}

// GetIdentity returns the tenant's identity settings.
func (c *Client) GetIdentity(ctx context.Context, tenant string) (*Identity, error) {
	var out Identity
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "identity"), nil, &out)
}

// DeleteIdentity removes the tenant's identity settings.
func (c *Client) DeleteIdentity(ctx context.Context, tenant string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "identity"), nil, nil)
}

// PutSSO sets the tenant's own OpenID Connect provider.
func (c *Client) PutSSO(ctx context.Context, tenant string, req PutSSORequest) (*SSO, error) {
	var out SSO
	return &out, c.Do(ctx, http.MethodPut, tenantPath(tenant, "sso"), req, &out)
}

// GetSSO returns the tenant's single sign-on settings.
func (c *Client) GetSSO(ctx context.Context, tenant string) (*SSO, error) {
	var out SSO
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "sso"), nil, &out)
}

// DeleteSSO removes the tenant's own provider.
func (c *Client) DeleteSSO(ctx context.Context, tenant string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "sso"), nil, nil)
}

// ListSessions lists the caller's own admin UI sessions.
func (c *Client) ListSessions(ctx context.Context) (*SessionList, error) {
	var out SessionList
	return &out, c.Do(ctx, http.MethodGet, "/v1/auth/sessions", nil, &out)
}

// EndSession ends one of the caller's sessions.
func (c *Client) EndSession(ctx context.Context, id string) error {
	return c.Do(ctx, http.MethodDelete, "/v1/auth/sessions/"+seg(id), nil, nil)
}

// EndMemberSessions signs a member of the tenant out everywhere.
func (c *Client) EndMemberSessions(ctx context.Context, tenant, user string) (*EndedSessions, error) {
	var out EndedSessions
	return &out, c.Do(ctx, http.MethodDelete, tenantPath(tenant, "members", user, "sessions"), nil, &out)
}

// ListSecrets lists a tenant's secret names; values are never returned.
func (c *Client) ListSecrets(ctx context.Context, tenant string) (*SecretList, error) {
	var out SecretList
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "secrets"), nil, &out)
}

// DeleteSecret deletes a tenant secret.
func (c *Client) DeleteSecret(ctx context.Context, tenant, name string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "secrets", name), nil, nil)
}

// CreateBot creates a bot with config as its version 1.
func (c *Client) CreateBot(ctx context.Context, tenant, slug string, config json.RawMessage) (*BotWithVersion, error) {
	var out BotWithVersion
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "bots"), CreateBotRequest{Slug: slug, Config: config}, &out)
}

// ListBots lists a tenant's bots.
func (c *Client) ListBots(ctx context.Context, tenant, cursor string) (*BotList, error) {
	var out BotList
	return &out, c.Do(ctx, http.MethodGet, withCursor(tenantPath(tenant, "bots"), cursor), nil, &out)
}

// GetBot returns a bot by slug or id.
func (c *Client) GetBot(ctx context.Context, tenant, bot string) (*Bot, error) {
	var out Bot
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "bots", bot), nil, &out)
}

// CreateVersion saves config as the bot's next version, or returns the
// existing version with the same fingerprint. An invalid config is an
// *Error with Code "invalid" and one Detail per problem.
func (c *Client) CreateVersion(ctx context.Context, tenant, bot string, config json.RawMessage) (*Version, error) {
	var out Version
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "bots", bot, "versions"), CreateVersionRequest{Config: config}, &out)
}

// ListVersions lists a bot's versions, oldest first.
func (c *Client) ListVersions(ctx context.Context, tenant, bot, cursor string) (*VersionList, error) {
	var out VersionList
	return &out, c.Do(ctx, http.MethodGet, withCursor(tenantPath(tenant, "bots", bot, "versions"), cursor), nil, &out)
}

// GetVersion returns one version with its config and compiled prompt.
func (c *Client) GetVersion(ctx context.Context, tenant, bot string, number int) (*Version, error) {
	var out Version
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "bots", bot, "versions", strconv.Itoa(number)), nil, &out)
}

// Publish makes version the bot's live one; an older number rolls back.
func (c *Client) Publish(ctx context.Context, tenant, bot string, version int) (*Bot, error) {
	var out Bot
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "bots", bot, "publish"), PublishRequest{Version: version}, &out)
}

// CreateVersionWithTests saves a config and its conversation tests as a
// new version.
func (c *Client) CreateVersionWithTests(ctx context.Context, tenant, bot string, config, tests json.RawMessage) (*Version, error) {
	var out Version
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "bots", bot, "versions"), CreateVersionRequest{Config: config, Tests: tests}, &out)
}

// DiffVersions compares version n's config with version m's.
func (c *Client) DiffVersions(ctx context.Context, tenant, bot string, n, m int) (*VersionDiff, error) {
	var out VersionDiff
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "bots", bot, "versions", strconv.Itoa(n), "diff", strconv.Itoa(m)), nil, &out)
}

// DeleteBot removes a bot with its versions and dialogs.
func (c *Client) DeleteBot(ctx context.Context, tenant, bot string) error {
	return c.Do(ctx, http.MethodDelete, tenantPath(tenant, "bots", bot), nil, nil)
}

// SetCanary sends percent of the bot's new dialogs to version.
func (c *Client) SetCanary(ctx context.Context, tenant, bot string, version, percent int) (*Bot, error) {
	var out Bot
	return &out, c.Do(ctx, http.MethodPut, tenantPath(tenant, "bots", bot, "canary"), SetCanaryRequest{Version: version, Percent: percent}, &out)
}

// GetCanary returns the bot's canary with the usage of it and the live version.
func (c *Client) GetCanary(ctx context.Context, tenant, bot string) (*Canary, error) {
	var out Canary
	return &out, c.Do(ctx, http.MethodGet, tenantPath(tenant, "bots", bot, "canary"), nil, &out)
}

// DropCanary ends the canary: new dialogs run the live version.
func (c *Client) DropCanary(ctx context.Context, tenant, bot string) (*Bot, error) {
	var out Bot
	return &out, c.Do(ctx, http.MethodDelete, tenantPath(tenant, "bots", bot, "canary"), nil, &out)
}

// PromoteCanary publishes the canary version and ends the canary.
func (c *Client) PromoteCanary(ctx context.Context, tenant, bot string) (*Bot, error) {
	var out Bot
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "bots", bot, "canary", "promote"), nil, &out)
}

// UpdateBot changes a bot's settings.
func (c *Client) UpdateBot(ctx context.Context, tenant, bot string, req UpdateBotRequest) (*Bot, error) {
	var out Bot
	return &out, c.Do(ctx, http.MethodPatch, tenantPath(tenant, "bots", bot), req, &out)
}

// RunTests runs the conversation tests stored with a version.
func (c *Client) RunTests(ctx context.Context, tenant, bot string, version int) (*TestRun, error) {
	var out TestRun
	return &out, c.Do(ctx, http.MethodPost, tenantPath(tenant, "bots", bot, "tests"), RunTestsRequest{Version: version}, &out)
}

// Validate checks a config without saving it.
func (c *Client) Validate(ctx context.Context, config json.RawMessage) (*ValidateResponse, error) {
	var out ValidateResponse
	return &out, c.Do(ctx, http.MethodPost, "/v1/validate", ValidateRequest{Config: config}, &out)
}

// ValidateFor checks a config as saving it to one of tenant's bots would:
// also the providers and models it names.
func (c *Client) ValidateFor(ctx context.Context, tenant string, config json.RawMessage) (*ValidateResponse, error) {
	var out ValidateResponse
	return &out, c.Do(ctx, http.MethodPost, "/v1/validate", ValidateRequest{Config: config, Tenant: tenant}, &out)
}

// Login starts an admin UI session; the server answers with a session cookie,
// so use WithHTTPClient with a cookie jar. For someone with two-factor on,
// the answer's TwoFactor says the second step (VerifyTOTP) and no session
// starts yet.
func (c *Client) Login(ctx context.Context, email, password string) (*LoginResponse, error) {
	var out LoginResponse
	return &out, c.Do(ctx, http.MethodPost, "/v1/auth/login", LoginRequest{Email: email, Password: password}, &out)
}

// Logout ends the session.
func (c *Client) Logout(ctx context.Context) error {
	return c.Do(ctx, http.MethodPost, "/v1/auth/logout", nil, nil)
}

// Me says who the credential belongs to.
func (c *Client) Me(ctx context.Context) (*Me, error) {
	var out Me
	return &out, c.Do(ctx, http.MethodGet, "/v1/auth/me", nil, &out)
}
