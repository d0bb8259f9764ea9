package main

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
)

// Settings is every PARLEY_* environment variable, read once at start.
type Settings struct {
	Addr string
	// MetricsAddr is where /metrics is served instead of Addr; empty
	// serves it on Addr with the API.
	MetricsAddr   string
	DataDir       string
	DatabaseURL   string
	SecretKey     string
	PlatformToken string
	LLMBaseURL    string
	LLMAPIKey     string
	LLMModel      string
	// LLMProvider is the kind of the default provider: openai or anthropic.
	LLMProvider string
	// AnthropicBaseURL and AnthropicAPIKey add a provider named
	// "anthropic" that bots may name besides the default one.
	AnthropicBaseURL string
	AnthropicAPIKey  string
	OutboundAllow    []string
	OutboundPorts    []int
	// OIDC is the operator's OpenID Connect provider for admin UI
	// sign-in (docs/sso.md); empty offers only tenants' own.
	OIDC platform.OIDCProvider
	// MCPStdio is the stdio MCP policy: PARLEY_MCP_STDIO_ALLOW and
	// PARLEY_MCP_STDIO_ENV.
	MCPStdio botconfig.StdioPolicy
	LogLevel slog.Level
	// Limits are the per-tenant and per-key message rates and the daily
	// token quota the runtime enforces.
	Limits dialog.Limits
	// RedisURL, when set, counts Limits in that Redis for every server
	// sharing it; RedisFailClosed refuses messages while it does not
	// answer, instead of counting per process.
	RedisURL        string
	RedisFailClosed bool
	// LeaseTTL is how long a dialog stays claimed by a server that stopped
	// renewing its lease without dying (it hangs). A server that died
	// holds nothing: its successor on SQLite settles what it left, and on
	// PostgreSQL the others see it gone at once.
	LeaseTTL time.Duration
	// TelegramAPI and SlackAPI are the API base URLs channel replies go
	// to: a self-hosted Telegram Bot API server, or a test server.
	TelegramAPI string
	SlackAPI    string
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client, for sign-in limits and the audit log.
	TrustedProxies []string
	// StdioEnv is what stdio MCP servers inherit from this process (PATH and
	// HOME, so `npx` and friends resolve), besides their config's env.
	StdioEnv []string
	// MaxImageBytes is the largest image a user message may carry.
	MaxImageBytes int64
	// WebhookTimeout bounds one webhook attempt.
	WebhookTimeout time.Duration
	// Migrate is PARLEY_MIGRATE: whether commands bring the database
	// schema up to date when they open it (migrateAuto), or only check
	// it is (migrateSkip), because a deployment runs `parley migrate`
	// once per release (docs/deploy.md).
	Migrate string
}

// The values of PARLEY_MIGRATE.
const (
	migrateAuto = "auto"
	migrateSkip = "skip"
)

// setting documents one environment variable for --help and the README.
type setting struct {
	name, def, help string
}

var settingsTable = []setting{
	{"PARLEY_ADDR", "127.0.0.1:8080", "address the server listens on"},
	{"PARLEY_METRICS_ADDR", "", "address serving /metrics (Prometheus) on its own, e.g. 127.0.0.1:9090; the API's address then answers /metrics 404. Empty serves /metrics on PARLEY_ADDR for anyone who reaches it"},
	{"PARLEY_DATA_DIR", "./data", "directory for the embedded SQLite database and generated key files"},
	{"PARLEY_DATABASE_URL", "", "PostgreSQL URL (postgres://...); empty uses SQLite in the data dir"},
	{"PARLEY_SECRET_KEY", "", "base64 or hex 32-byte key encrypting tenant secrets; empty generates a key file in the data dir"},
	{"PARLEY_PLATFORM_TOKEN", "", "token that may create tenants; empty generates one in the data dir"},
	{"PARLEY_LLM_BASE_URL", "https://api.openai.com/v1", "OpenAI-compatible API base URL (OpenAI, Azure, Ollama, vLLM, ...)"},
	{"PARLEY_LLM_API_KEY", "", "API key for the LLM provider; falls back to OPENAI_API_KEY"},
	{"PARLEY_LLM_MODEL", "gpt-4o-mini", "model used when a bot's config names none"},
	{"PARLEY_LLM_PROVIDER", "openai", "kind of the default provider: openai (OpenAI-compatible) or anthropic (Messages API; PARLEY_LLM_BASE_URL then defaults to https://api.anthropic.com)"},
	{"PARLEY_ANTHROPIC_API_KEY", "", "when set, bots may also name the provider anthropic (llm.provider, llm.fallbacks), which uses this key"},
	{"PARLEY_ANTHROPIC_BASE_URL", "https://api.anthropic.com", "base URL of the anthropic provider"},
	{"PARLEY_OUTBOUND_ALLOW", "", "comma-separated CIDRs or host names tenant tools may reach despite the private-address block"},
	{"PARLEY_OIDC_ISSUER", "", "issuer URL of the operator's OpenID Connect provider for admin UI sign-in (members matched by verified email; docs/sso.md); empty: only tenants' own providers"},
	{"PARLEY_OIDC_CLIENT_ID", "", "client id Parley is registered as at PARLEY_OIDC_ISSUER; its redirect URI is https://<host>/v1/auth/oidc/callback"},
	{"PARLEY_OIDC_CLIENT_SECRET", "", "client secret of PARLEY_OIDC_CLIENT_ID (empty for a public client using PKCE alone)"},
	{"PARLEY_OUTBOUND_PORTS", "", "comma-separated extra ports tenant tools may reach besides 80 and 443"},
	{"PARLEY_MCP_STDIO_ALLOW", "", "stdio MCP servers that may be started, matched on the exact argv: comma-separated command lines split on spaces, or JSON [[\"cmd\",\"arg\"],...]"},
	{"PARLEY_MCP_STDIO_ENV", "", "comma-separated env keys a tenant may set on an allowlisted stdio MCP server; empty: none"},
	{"PARLEY_LOG_LEVEL", "info", "debug, info, warn or error"},
	{"PARLEY_TELEGRAM_API_URL", "https://api.telegram.org", "Telegram Bot API server telegram channels call (sendMessage, setWebhook); a self-hosted one works"},
	{"PARLEY_SLACK_API_URL", "https://slack.com/api", "Slack Web API base URL slack channels call (chat.postMessage)"},
	{"PARLEY_RATE_LIMIT_TENANT", "20/s,burst=40", "messages a tenant may send (per server process, or across servers with PARLEY_REDIS_URL): N/s, N/m or N/h, optional ,burst=B; off for none"},
	{"PARLEY_RATE_LIMIT_KEY", "10/s,burst=20", "messages one API key may send (per server process, or across servers with PARLEY_REDIS_URL), same format; off for none"},
	{"PARLEY_STREAM_LIMIT_TENANT", "0", "replies a tenant's dialogs may generate at once (per server process, or across servers with PARLEY_REDIS_URL); 0 for no limit"},
	{"PARLEY_DAILY_TOKEN_QUOTA", "0", "model tokens (input + output) a tenant may use per UTC day, e.g. 2000000 or 2M; 0 for unlimited"},
	{"PARLEY_REDIS_URL", "", "Redis (redis://host:6379/0, rediss:// for TLS) where every server sharing it counts rate limits, concurrent streams and daily quotas together; empty: each server counts its own"},
	{"PARLEY_REDIS_FAIL", "open", "while PARLEY_REDIS_URL does not answer: open counts limits per server process, closed refuses messages (503 unavailable)"},
	{"PARLEY_MAX_IMAGE_BYTES", "5242880", "largest image file (bytes) a user may send with a message, 1024 to 20971520; images are stored in the message, in the database"},
	{"PARLEY_TRUSTED_PROXIES", "", "comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For names the client (sign-in limits, audit log); empty: the connection's peer is the client"},
	{"PARLEY_MIGRATE", "auto", "auto: serve and the other commands bring the database schema up to date when they start; skip: they refuse to start on an older schema (parley migrate runs once per release instead, as the Helm chart's job does)"},
	{"PARLEY_WEBHOOK_TIMEOUT", "15s", "how long one webhook attempt may take before it counts as failed and is retried on the schedule (1s to 1m); a delivery a dead server held is tried again this long plus 45 s after its claim"},
	{"PARLEY_DIALOG_LEASE_TTL", "1m", "how long a dialog stays claimed by a server that hangs without dying, before another run may answer it (1s to 1h); a server that died holds nothing"},
}

// LoadSettings reads and validates the settings from getenv.
func LoadSettings(getenv func(string) string) (Settings, error) {
	get := func(name string) string {
		v := strings.TrimSpace(getenv(name))
		if v != "" {
			return v
		}
		for _, s := range settingsTable {
			if s.name == name {
				return s.def
			}
		}
		return ""
	}
	s := Settings{
		Addr:             get("PARLEY_ADDR"),
		MetricsAddr:      get("PARLEY_METRICS_ADDR"),
		DataDir:          get("PARLEY_DATA_DIR"),
		DatabaseURL:      get("PARLEY_DATABASE_URL"),
		SecretKey:        get("PARLEY_SECRET_KEY"),
		PlatformToken:    get("PARLEY_PLATFORM_TOKEN"),
		LLMBaseURL:       get("PARLEY_LLM_BASE_URL"),
		LLMAPIKey:        get("PARLEY_LLM_API_KEY"),
		LLMModel:         get("PARLEY_LLM_MODEL"),
		LLMProvider:      get("PARLEY_LLM_PROVIDER"),
		AnthropicBaseURL: get("PARLEY_ANTHROPIC_BASE_URL"),
		AnthropicAPIKey:  get("PARLEY_ANTHROPIC_API_KEY"),
		OutboundAllow:    splitList(get("PARLEY_OUTBOUND_ALLOW")),
		OIDC: platform.OIDCProvider{Issuer: get("PARLEY_OIDC_ISSUER"), ClientID: get("PARLEY_OIDC_CLIENT_ID"),
			ClientSecret: get("PARLEY_OIDC_CLIENT_SECRET")},
		TelegramAPI:    get("PARLEY_TELEGRAM_API_URL"),
		SlackAPI:       get("PARLEY_SLACK_API_URL"),
		TrustedProxies: splitList(get("PARLEY_TRUSTED_PROXIES")),
		Migrate:        strings.ToLower(get("PARLEY_MIGRATE")),
	}
	if s.Migrate != migrateAuto && s.Migrate != migrateSkip {
		return Settings{}, fmt.Errorf("PARLEY_MIGRATE: %q is not auto or skip", get("PARLEY_MIGRATE"))
	}
	for _, p := range s.TrustedProxies {
		if _, _, err := net.ParseCIDR(p); err != nil && net.ParseIP(p) == nil {
			return Settings{}, fmt.Errorf("PARLEY_TRUSTED_PROXIES: %q is not an IP address or CIDR", p)
		}
	}
	if (s.OIDC.Issuer == "") != (s.OIDC.ClientID == "") {
		return Settings{}, fmt.Errorf("PARLEY_OIDC_ISSUER and PARLEY_OIDC_CLIENT_ID go together: set both or neither")
	}
	if v := s.OIDC.Issuer; v != "" {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return Settings{}, fmt.Errorf("PARLEY_OIDC_ISSUER: %q is not an absolute http(s) URL", v)
		}
	}
	if s.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(s.MetricsAddr); err != nil {
			return Settings{}, fmt.Errorf("PARLEY_METRICS_ADDR: %q is not a host:port address such as 127.0.0.1:9090", s.MetricsAddr)
		}
	}
	var err error
	if s.MCPStdio.Allow, err = botconfig.ParseStdioAllow(get("PARLEY_MCP_STDIO_ALLOW")); err != nil {
		return Settings{}, fmt.Errorf("PARLEY_MCP_STDIO_ALLOW: %w", err)
	}
	if s.MCPStdio.EnvKeys, err = botconfig.ParseStdioEnv(get("PARLEY_MCP_STDIO_ENV")); err != nil {
		return Settings{}, fmt.Errorf("PARLEY_MCP_STDIO_ENV: %w", err)
	}
	s.StdioEnv = []string{"PATH=" + getenv("PATH"), "HOME=" + getenv("HOME")}
	switch s.LLMProvider {
	case "openai":
		if s.LLMAPIKey == "" {
			s.LLMAPIKey = strings.TrimSpace(getenv("OPENAI_API_KEY"))
		}
	case "anthropic":
		if strings.TrimSpace(getenv("PARLEY_LLM_BASE_URL")) == "" {
			s.LLMBaseURL = "https://api.anthropic.com"
		}
	default:
		return Settings{}, fmt.Errorf("PARLEY_LLM_PROVIDER: %q is not openai or anthropic", s.LLMProvider)
	}
	for _, p := range splitList(get("PARLEY_OUTBOUND_PORTS")) {
		port, err := strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return Settings{}, fmt.Errorf("PARLEY_OUTBOUND_PORTS: %q is not a port number", p)
		}
		s.OutboundPorts = append(s.OutboundPorts, port)
	}
	if s.MaxImageBytes, err = strconv.ParseInt(get("PARLEY_MAX_IMAGE_BYTES"), 10, 64); err != nil || s.MaxImageBytes < 1<<10 || s.MaxImageBytes > 20<<20 {
		return Settings{}, fmt.Errorf("PARLEY_MAX_IMAGE_BYTES: %q is not a number of bytes from 1024 to 20971520", get("PARLEY_MAX_IMAGE_BYTES"))
	}
	v := get("PARLEY_WEBHOOK_TIMEOUT")
	if s.WebhookTimeout, err = time.ParseDuration(v); err != nil || s.WebhookTimeout < time.Second || s.WebhookTimeout > time.Minute {
		return Settings{}, fmt.Errorf("PARLEY_WEBHOOK_TIMEOUT: %q is not a duration from 1s to 1m, like 15s", v)
	}
	if err := s.LogLevel.UnmarshalText([]byte(get("PARLEY_LOG_LEVEL"))); err != nil {
		return Settings{}, fmt.Errorf("PARLEY_LOG_LEVEL: %q is not one of debug, info, warn, error", get("PARLEY_LOG_LEVEL"))
	}
	for name, v := range map[string]string{"PARLEY_TELEGRAM_API_URL": s.TelegramAPI, "PARLEY_SLACK_API_URL": s.SlackAPI} {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return Settings{}, fmt.Errorf("%s: %q is not an absolute http(s) URL", name, v)
		}
	}
	if err := s.loadLimits(get); err != nil {
		return Settings{}, err
	}
	if s.DatabaseURL != "" && !strings.HasPrefix(s.DatabaseURL, "postgres://") && !strings.HasPrefix(s.DatabaseURL, "postgresql://") {
		return Settings{}, fmt.Errorf("PARLEY_DATABASE_URL: must start with postgres:// or postgresql://")
	}
	return s, nil
}

// configOptions are the operator's rules for tenant configs: what
// validation and compilation check beyond the config itself.
func configOptions(s Settings) botconfig.Options {
	return botconfig.Options{Stdio: s.MCPStdio}
}

func splitList(v string) []string {
	var out []string
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// printSettings writes the settings table for --help.
func printSettings(w io.Writer) {
	fmt.Fprintln(w, "\nsettings (environment variables):")
	for _, s := range settingsTable {
		def := s.def
		if def == "" {
			def = `""`
		}
		fmt.Fprintf(w, "  %-24s default %-28s %s\n", s.name, def, s.help)
	}
}
