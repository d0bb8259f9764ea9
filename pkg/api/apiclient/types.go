package apiclient

import (
	"encoding/json"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
)

// This file is the wire format of Parley's HTTP API: the server (pkg/api)
// encodes these types and the client decodes them, so the two cannot drift.

// ErrorBody is the JSON of every error response.
type ErrorBody struct {
	Error Error `json:"error"`
}

// Error is an API error: a stable code, a human message and, for invalid
// input, one detail per problem. It is also the error the client returns.
type Error struct {
	// Status is the HTTP status, filled by the client; it is not sent.
	Status  int      `json:"-"`
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []Detail `json:"details"`
}

// Error reads like "not_found: bot not found".
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Detail is one problem with a request: the JSON pointer of the offending
// value ("" for the whole request) and what is wrong with it.
type Detail struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// Error codes. Each maps to exactly one HTTP status.
const (
	CodeBadRequest       = "bad_request"        // 400: malformed JSON or parameters
	CodeUnauthorized     = "unauthorized"       // 401: no or bad credentials
	CodeForbidden        = "forbidden"          // 403: credentials lack the permission
	CodeNotFound         = "not_found"          // 404: no such resource for this caller
	CodeMethodNotAllowed = "method_not_allowed" // 405
	CodeConflict         = "conflict"           // 409: a slug or name is taken
	CodeDialogClosed     = "dialog_closed"      // 409: the dialog is closed and takes no more messages
	CodeTooLarge         = "too_large"          // 413: request body over the limit
	CodeInvalid          = "invalid"            // 422: well-formed but invalid; details say where
	CodeRateLimited      = "rate_limited"       // 429: retry after the Retry-After header
	CodeLinkExpired      = "link_expired"       // 410: a signed link that was valid once; ask for a new one
	CodeInternal         = "internal"           // 500: our fault; the log has the detail
	CodeUnavailable      = "unavailable"        // 503: not ready (e.g. the database is down)
)

// Health is the body of /healthz and /readyz.
type Health struct {
	Status string `json:"status"`
	// Redis is, on /readyz of a server with PARLEY_REDIS_URL, "up" while
	// limits are shared through it and "down" while this server counts
	// its own (or refuses messages, with PARLEY_REDIS_FAIL=closed).
	Redis string `json:"redis,omitempty"`
}

// Tenant is one customer of the platform.
type Tenant struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	// RetentionDays: dialogs are deleted that many days after their last
	// activity; 0 keeps them.
	RetentionDays int `json:"retention_days"`
	// IdleMinutes: a dialog quiet that long gets its outcome
	// (docs/insights.md); 0 waits for it to close.
	IdleMinutes int `json:"idle_minutes"`
	// RequireTwoFactor: members signing in with a password need a second
	// factor (docs/sso.md).
	RequireTwoFactor bool      `json:"require_two_factor"`
	CreatedAt        time.Time `json:"created_at"`
}

// UpdateTenantRequest is the body of PATCH /v1/tenants/{tenant}; absent
// fields stay as they are.
type UpdateTenantRequest struct {
	Name          *string `json:"name,omitempty"`
	RetentionDays *int    `json:"retention_days,omitempty"`
	IdleMinutes   *int    `json:"idle_minutes,omitempty"`
	// RequireTwoFactor asks members who sign in with a password for a
	// second factor.
	RequireTwoFactor *bool `json:"require_two_factor,omitempty"`
}

// CreateTenantRequest is the body of POST /v1/tenants.
type CreateTenantRequest struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
	// OwnerEmail, when set, makes that user (created with OwnerPassword if
	// new) the tenant's owner, who can then sign in to the admin UI.
	OwnerEmail    string `json:"owner_email,omitempty"`
	OwnerPassword string `json:"owner_password,omitempty"`
}

// CreateTenantResponse is the new tenant and its first admin key, shown once.
type CreateTenantResponse struct {
	Tenant Tenant    `json:"tenant"`
	APIKey NewAPIKey `json:"api_key"`
}

// TenantList is one page of tenants.
type TenantList struct {
	Tenants    []Tenant `json:"tenants"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// API key kinds and scopes.
const (
	KeyKindServer      = "sk" // server key, scopes admin and/or chat
	KeyKindPublishable = "pk" // widget key, bound to one bot and allowed origins
	ScopeAdmin         = "admin"
	ScopeChat          = "chat"
)

// APIKey describes a key without its secret: only the prefix and last four
// characters are kept.
type APIKey struct {
	ID      string   `json:"id"`
	Name    string   `json:"name"`
	Kind    string   `json:"kind"`
	Scopes  []string `json:"scopes"`
	Bot     string   `json:"bot,omitempty"`
	Origins []string `json:"origins,omitempty"`
	Prefix  string   `json:"prefix"`
	Last4   string   `json:"last4"`
	// Key is the whole key of a pk key, public by design (it is written
	// into the pages of the site it serves); never set for an sk key.
	Key        string     `json:"key,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
}

// UpdateAPIKeyRequest is the body of PATCH
// /v1/tenants/{tenant}/api-keys/{id}: a pk key's new allowed origins.
type UpdateAPIKeyRequest struct {
	Origins *[]string `json:"origins"`
}

// NewAPIKey is a key just created: the only time its plaintext is shown.
type NewAPIKey struct {
	APIKey
	Key string `json:"key"`
}

// CreateAPIKeyRequest is the body of POST /v1/tenants/{tenant}/api-keys.
// Kind defaults to "sk"; a "pk" key needs Bot and Origins.
type CreateAPIKeyRequest struct {
	Name      string     `json:"name"`
	Kind      string     `json:"kind,omitempty"`
	Scopes    []string   `json:"scopes,omitempty"`
	Bot       string     `json:"bot,omitempty"`
	Origins   []string   `json:"origins,omitempty"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// APIKeyList is one page of a tenant's keys, revoked ones included.
type APIKeyList struct {
	APIKeys    []APIKey `json:"api_keys"`
	NextCursor string   `json:"next_cursor,omitempty"`
}

// PutSecretRequest is the body of PUT /v1/tenants/{tenant}/secrets/{name}.
// Secrets are write-only: no response ever carries a value.
type PutSecretRequest struct {
	Value string `json:"value"`
}

// PutIdentityRequest is the body of PUT /v1/tenants/{tenant}/identity: how
// the tenant's signed end-user tokens are verified. Give Secret (HS256,
// at least 32 bytes) or JWKSURL (RS256/ES256 keys), not both; Audience,
// when set, must be in every token's aud. The secret is write-only.
type PutIdentityRequest struct {
	Secret   string `json:"secret,omitempty"`
	JWKSURL  string `json:"jwks_url,omitempty"`
	Audience string `json:"audience,omitempty"`
}

// Identity is a tenant's identity settings; never the secret.
type Identity struct {
	HasSecret bool      `json:"has_secret"`
	JWKSURL   string    `json:"jwks_url,omitempty"`
	Audience  string    `json:"audience,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PutSSORequest is PUT /v1/tenants/{tenant}/sso: the tenant's own OpenID
// Connect provider. ClientSecret is write-only; empty keeps the saved one.
// DefaultRole ("" for none) is what a user of an AllowedDomains email who
// is not a member gets on first sign-in (just-in-time membership).
// RequireSSO closes password sign-in to the tenant's members.
type PutSSORequest struct {
	Issuer         string   `json:"issuer"`
	ClientID       string   `json:"client_id"`
	ClientSecret   string   `json:"client_secret,omitempty"`
	DefaultRole    string   `json:"default_role,omitempty"`
	AllowedDomains []string `json:"allowed_domains,omitempty"`
	RequireSSO     bool     `json:"require_sso,omitempty"`
}

// SSO is a tenant's single sign-on settings; never the client secret.
type SSO struct {
	Issuer         string    `json:"issuer"`
	ClientID       string    `json:"client_id"`
	HasSecret      bool      `json:"has_secret"`
	DefaultRole    string    `json:"default_role"`
	AllowedDomains []string  `json:"allowed_domains"`
	RequireSSO     bool      `json:"require_sso"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// Session is one of the caller's admin UI sessions (GET /v1/auth/sessions);
// never its token. Via is password, sso or break_glass; TenantID is set
// for a sign-in through a tenant's own provider.
type Session struct {
	ID        string    `json:"id"`
	Via       string    `json:"via"`
	TenantID  string    `json:"tenant_id,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	Current   bool      `json:"current"`
}

// SessionList is GET /v1/auth/sessions, newest first.
type SessionList struct {
	Sessions []Session `json:"sessions"`
}

// EndedSessions answers DELETE /v1/tenants/{tenant}/members/{user}/sessions.
type EndedSessions struct {
	Ended int64 `json:"ended"`
}

// Secret names a stored secret.
type Secret struct {
	Name      string    `json:"name"`
	UpdatedAt time.Time `json:"updated_at"`
}

// SecretList is every secret name of a tenant.
type SecretList struct {
	Secrets []Secret `json:"secrets"`
}

// Bot is a tenant's chatbot; its behaviour is its published version.
type Bot struct {
	ID   string `json:"id"`
	Slug string `json:"slug"`
	Name string `json:"name"`
	// PublishedVersion is the live version's number; 0 means none yet.
	PublishedVersion    int       `json:"published_version"`
	RequirePassingTests bool      `json:"require_passing_tests"`
	CanaryVersion       int       `json:"canary_version,omitempty"`
	CanaryPercent       int       `json:"canary_percent,omitempty"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
}

// CreateBotRequest is the body of POST /v1/tenants/{tenant}/bots.
type CreateBotRequest struct {
	Slug   string          `json:"slug"`
	Config json.RawMessage `json:"config"`
	// Tests are conversation tests stored with version 1 (docs/testing.md).
	Tests json.RawMessage `json:"tests,omitempty"`
}

// BotWithVersion answers bot creation: the bot and its version 1.
type BotWithVersion struct {
	Bot     Bot     `json:"bot"`
	Version Version `json:"version"`
}

// BotList is one page of a tenant's bots.
type BotList struct {
	Bots       []Bot  `json:"bots"`
	NextCursor string `json:"next_cursor,omitempty"`
}

// Version is one immutable saved config of a bot with what it compiled to.
type Version struct {
	ID          string          `json:"id"`
	Number      int             `json:"number"`
	Fingerprint string          `json:"fingerprint"`
	Config      json.RawMessage `json:"config,omitempty"`
	Tests       json.RawMessage `json:"tests,omitempty"`
	Prompt      string          `json:"prompt,omitempty"`
	CreatedBy   string          `json:"created_by"`
	CreatedAt   time.Time       `json:"created_at"`
	// Warnings answer only a save (a new version or a new bot): what the
	// config asks that may not work but did not stop the save, such as a
	// model its provider does not list, each with a pointer into the
	// config. Absent when there are none.
	Warnings []Detail `json:"warnings,omitempty"`
}

// CreateVersionRequest is the body of POST .../bots/{bot}/versions. Saving
// a config identical to an existing version returns that version.
type CreateVersionRequest struct {
	Config json.RawMessage `json:"config"`
	// Tests are conversation tests stored with the version (docs/testing.md).
	Tests json.RawMessage `json:"tests,omitempty"`
}

// UpdateBotRequest is the body of PATCH .../bots/{bot}; absent fields stay.
type UpdateBotRequest struct {
	// RequirePassingTests refuses to publish a version whose tests fail.
	RequirePassingTests *bool `json:"require_passing_tests,omitempty"`
}

// VersionDiff answers GET .../versions/{n}/diff/{m}: the changes from
// version n's config to version m's.
type VersionDiff struct {
	From int `json:"from"`
	To   int `json:"to"`
	// Changes are {op: add|remove|replace, pointer, from?, to?}, by pointer.
	Changes []Change `json:"changes"`
	// Unified is a unified diff of the pretty-printed configs.
	Unified      string `json:"unified"`
	TestsChanged bool   `json:"tests_changed"`
}

// Change is one difference between two configs at a JSON pointer.
type Change struct {
	Op      string          `json:"op"`
	Pointer string          `json:"pointer"`
	From    json.RawMessage `json:"from,omitempty"`
	To      json.RawMessage `json:"to,omitempty"`
}

// SetCanaryRequest is the body of PUT .../bots/{bot}/canary.
type SetCanaryRequest struct {
	Version int `json:"version"`
	// Percent of new dialogs (1-100) that run Version.
	Percent int `json:"percent"`
}

// Canary answers GET .../bots/{bot}/canary: the candidate and what it and
// the live version started and spent, each metered from its own dialogs.
type Canary struct {
	Version int          `json:"version"`
	Percent int          `json:"percent"`
	Live    VersionUsage `json:"live"`
	Canary  VersionUsage `json:"canary"`
}

// VersionUsage is what one version's (non-preview) dialogs started and spent.
type VersionUsage struct {
	Version      int   `json:"version"`
	Dialogs      int64 `json:"dialogs"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
}

// RunTestsRequest is the body of POST .../bots/{bot}/tests.
type RunTestsRequest struct {
	Version int `json:"version"`
}

// TestRun answers POST .../bots/{bot}/tests: one result per stored test.
type TestRun struct {
	Version int          `json:"version"`
	Passed  bool         `json:"passed"`
	Results []TestResult `json:"results"`
}

// TestResult is one conversation test's outcome.
type TestResult struct {
	Name       string   `json:"name"`
	Passed     bool     `json:"passed"`
	Failures   []string `json:"failures,omitempty"`
	DurationMS int64    `json:"duration_ms"`
}

// VersionList is one page of a bot's versions, oldest first; lists leave out
// Config and Prompt.
type VersionList struct {
	Versions   []Version `json:"versions"`
	NextCursor string    `json:"next_cursor,omitempty"`
}

// PublishRequest is the body of POST .../bots/{bot}/publish; publishing an
// older version is a rollback.
type PublishRequest struct {
	Version int `json:"version"`
}

// ValidateRequest is the body of POST /v1/validate.
type ValidateRequest struct {
	Config json.RawMessage `json:"config"`
	// Tenant (slug or id), when set, checks the providers and models the
	// config names as saving to one of the tenant's bots does: the
	// providers must exist, and the models are checked against their
	// lists. The caller must be allowed to read the tenant's versions.
	Tenant string `json:"tenant,omitempty"`
}

// ValidateResponse says whether a config is valid and, when it is, what it
// compiles to.
type ValidateResponse struct {
	Valid  bool     `json:"valid"`
	Errors []Detail `json:"errors"`
	// Warnings do not make the config invalid: a model its provider does
	// not list, with a pointer each. Always a list.
	Warnings []Detail `json:"warnings"`
	Prompt   string   `json:"prompt"`
	// Tools are what the model is offered; empty when the config is invalid.
	Tools []botconfig.OfferedTool `json:"tools"`
}

// LoginRequest is the body of POST /v1/auth/login.
type LoginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// Me says who the caller is: a session's user and memberships, or a key.
type Me struct {
	// Kind is "platform", "key" or "session".
	Kind        string       `json:"kind"`
	User        *User        `json:"user,omitempty"`
	Memberships []Membership `json:"memberships,omitempty"`
	Key         *APIKey      `json:"key,omitempty"`
}

// User is an admin UI user.
type User struct {
	ID    string `json:"id"`
	Email string `json:"email"`
}

// Membership is a tenant a user belongs to, with the role there.
type Membership struct {
	Tenant Tenant `json:"tenant"`
	Role   string `json:"role"`
}

// Draft is the signed-in user's autosaved config of a bot, the body and
// answer of GET|PUT /v1/tenants/{tenant}/bots/{bot}/draft. Config is the
// editor's text as typed (it need not parse yet); Tests likewise.
type Draft struct {
	Config    string    `json:"config"`
	Tests     string    `json:"tests,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}
