package main

import (
	"context"
	"encoding/base64"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/inbound"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/redislimit"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/tool/builtin"
	"github.com/parleyhq/parley/pkg/tool/mcptool"
	"github.com/parleyhq/parley/web"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
)

// shutdownTimeout bounds how long serve waits for requests in flight after
// it was told to stop; then it closes what is left.
const shutdownTimeout = 15 * time.Second

// Names of the files serve generates in the data dir when the settings
// leave the secrets key or the platform token empty.
const (
	secretKeyFile     = "secret.key"
	platformTokenFile = "platform_token"
)

// serve runs the HTTP server until ctx ends: `parley serve`.
func (m *Main) serve(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("parley serve", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, "usage: parley serve\n\nRuns the server; stops gracefully on SIGTERM or Ctrl-C.")
		printSettings(m.Stderr)
	}
	if _, helped, err := parseArgs(fs, args, 0); helped || err != nil {
		return err
	}
	settings, err := LoadSettings(m.Getenv)
	if err != nil {
		return err
	}
	// Bind first: an address in use is then the one error, before the
	// database is opened and the background loops start (which, stopped
	// by a failed start, would log errors of their own).
	ln, err := net.Listen("tcp", settings.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s (PARLEY_ADDR): %w", settings.Addr, err)
	}
	defer ln.Close()
	d, err := m.openDataWith(ctx, settings, true)
	if err != nil {
		return err
	}
	defer d.Close()
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// The connection pool: go_sql_in_use_connections at go_sql_max_open_connections,
	// and go_sql_wait_duration_seconds_total rising, say turns queue for
	// connections (docs/deploy.md).
	if pool, err := d.store.DB().DB(); err == nil {
		reg.MustRegister(collectors.NewDBStatsCollector(pool, "parley"))
	}
	rt, closeTools, err := openRuntime(d, reg)
	if err != nil {
		return err
	}
	defer closeTools()
	channels, err := openChannels(d, rt, reg)
	if err != nil {
		return err
	}
	handler, err := api.New(api.Options{Platform: d.platform, Runtime: rt, Inbound: channels, Logger: d.log, Metrics: reg, Web: web.Files(),
		TrustedProxies: d.settings.TrustedProxies, MetricsElsewhere: d.settings.MetricsAddr != ""})
	if err != nil {
		return err
	}
	stopWebhooks, err := startWebhooks(ctx, d, reg)
	if err != nil {
		return err
	}
	defer stopWebhooks()
	stopKnowledge, err := startKnowledge(ctx, d)
	if err != nil {
		return err
	}
	defer stopKnowledge()
	// Running loops do not end with their requests (a reply is stored even
	// when its client left), so stopping cancels them: each open stream
	// gets a final error event and the requests can finish. serve waits
	// for it, so the usage the runs metered is written before the store
	// closes.
	rtStopped := make(chan struct{})
	stopped := context.AfterFunc(ctx, func() {
		defer close(rtStopped)
		stopCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := rt.Shutdown(stopCtx); err != nil {
			d.log.Warn("dialog runs still going at shutdown, or their usage unwritten", "err", err)
		}
		if err := channels.Shutdown(stopCtx); err != nil {
			d.log.Warn("channel replies still going at shutdown", "err", err)
		}
	})
	defer stopped()
	go channels.Run(ctx)
	go sweepRetention(ctx, rt, d.log)
	go sweepIdle(ctx, rt, d.log)
	go pruneChannelDeliveries(ctx, d)
	metricsAt, err := serveMetrics(ctx, d, reg)
	if err != nil {
		return err
	}
	m.announce(d.store, d.where, d.settings, metricsAt, ln.Addr().String())
	l := d.settings.Limits
	d.log.Info("parley listening", "addr", ln.Addr().String(), "database", d.store.Dialect(),
		"tenant_rate_per_s", l.TenantRate, "tenant_burst", l.TenantBurst, "key_rate_per_s", l.KeyRate, "key_burst", l.KeyBurst,
		"daily_token_quota", l.DailyTokens, "tenant_streams", l.TenantStreams, "shared_limits", d.settings.RedisURL != "",
		"dialog_lease_ttl", d.settings.LeaseTTL.String())
	err = runServer(ctx, ln, handler, d.log)
	if ctx.Err() != nil {
		<-rtStopped // bounded by shutdownTimeout
	}
	return err
}

// serveMetrics serves /metrics on PARLEY_METRICS_ADDR until ctx ends and
// returns the bound address. Unset, /metrics stays on the API's address as
// it always was, so upgrading stops no scrape; a warning says so when that
// address is not loopback, where anyone who reaches the API reads it.
func serveMetrics(ctx context.Context, d *data, reg *prometheus.Registry) (string, error) {
	if d.settings.MetricsAddr == "" {
		if host, _, err := net.SplitHostPort(d.settings.Addr); err == nil && !isLoopback(host) {
			d.log.Warn("/metrics is served on the public address; set PARLEY_METRICS_ADDR to serve it on its own", "addr", d.settings.Addr)
		}
		return "", nil
	}
	ln, err := net.Listen("tcp", d.settings.MetricsAddr)
	if err != nil {
		return "", fmt.Errorf("listen on %s (PARLEY_METRICS_ADDR): %w", d.settings.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(d.log.Handler(), slog.LevelWarn)}
	go srv.Serve(ln) // its error is ErrServerClosed, once ctx ends
	context.AfterFunc(ctx, func() { srv.Close() })
	return ln.Addr().String(), nil
}

// isLoopback reports whether host (of a listen address) reaches this
// machine only.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// startWebhooks runs the webhook deliverer and keeps this process's cache
// of subscriptions in step, until ctx ends or the returned func is called;
// that func waits for the attempts in flight to be recorded, so call it
// before the store closes.
func startWebhooks(ctx context.Context, d *data, reg prometheus.Registerer) (func(), error) {
	policy, err := outboundPolicy(d.settings)
	if err != nil {
		return nil, err
	}
	// Standard Webhooks follow no redirect: a 3xx is a failed attempt.
	client := outbound.NewClient(policy, outbound.Options{MaxRedirects: -1})
	deliverer, err := d.platform.Webhooks().NewDeliverer(platform.DelivererOptions{Client: client, Metrics: reg, Timeout: d.settings.WebhookTimeout,
		OwnsDatabase: d.store.Dialect() == store.DialectSQLite})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); d.platform.Webhooks().Watch(ctx) }()
	go func() { defer wg.Done(); deliverer.Run(ctx) }()
	return func() { cancel(); wg.Wait() }, nil
}

// openChannels builds what answers channel messages: replies and
// setWebhook go to the platforms' API URLs through the outbound client.
// Its job queue runs (Run) until serve's context ends.
func openChannels(d *data, rt *dialog.Runtime, reg prometheus.Registerer) (*inbound.Service, error) {
	policy, err := outboundPolicy(d.settings)
	if err != nil {
		return nil, err
	}
	return inbound.New(inbound.Options{Platform: d.platform, Runtime: rt, Store: d.store,
		Client: outbound.NewClient(policy, outbound.Options{MaxRedirects: -1}), TelegramAPI: d.settings.TelegramAPI,
		SlackAPI: d.settings.SlackAPI, Logger: d.log, Metrics: reg, OwnsDatabase: d.store.Dialect() == store.DialectSQLite})
}

// channelDeliveriesKept is how long a channel remembers a platform's
// delivery ids: far past any platform's retries (Slack's last within
// minutes; Telegram and Standard Webhooks senders give up within days).
const channelDeliveriesKept = 7 * 24 * time.Hour

// pruneChannelDeliveries forgets old delivery ids hourly until ctx ends.
func pruneChannelDeliveries(ctx context.Context, d *data) {
	tick := time.NewTicker(time.Hour)
	defer tick.Stop()
	for {
		if _, err := d.store.ChannelJobs().PruneDeliveries(ctx, time.Now().Add(-channelDeliveriesKept)); err != nil && ctx.Err() == nil {
			d.log.Warn("channels: prune delivery ids", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// outboundPolicy is the operator's policy for tenant-controlled URLs.
func outboundPolicy(s Settings) (outbound.Policy, error) {
	policy, err := outbound.ParsePolicy(s.OutboundAllow, s.OutboundPorts)
	if err != nil {
		return policy, fmt.Errorf("outbound policy (PARLEY_OUTBOUND_ALLOW, PARLEY_OUTBOUND_PORTS): %w", err)
	}
	return policy, nil
}

// openRuntime builds what answers dialogs: the configured
// OpenAI-compatible provider, and the SSRF-safe client and MCP pool that
// tenant tools use. The returned func closes the MCP connections.
func openRuntime(d *data, reg prometheus.Registerer) (*dialog.Runtime, func() error, error) {
	s := d.settings
	policy, err := outboundPolicy(s)
	if err != nil {
		return nil, nil, err
	}
	client := outbound.NewClient(policy, outbound.Options{})
	provider, named, err := openProviders(s, d.log)
	if err != nil {
		return nil, nil, err
	}
	catalog, err := llm.LoadCatalog(configs.Models())
	if err != nil {
		return nil, nil, fmt.Errorf("model catalog: %w", err)
	}
	shared, stopShared, err := openShared(s, d.log, reg)
	if err != nil {
		return nil, nil, err
	}
	pool := mcptool.New(mcptool.Options{HTTPClient: client, Stdio: s.MCPStdio, StdioEnv: s.StdioEnv, Logger: d.log})
	rt, err := dialog.New(dialog.Options{Service: d.platform, Store: d.store, Catalog: catalog, HTTPClient: client,
		Natives: builtin.NewRegistry(), Clock: time.Now, Logger: d.log,
		Provider: provider, Providers: named, NewProvider: newTenantProvider, DefaultModel: s.LLMModel, MCP: pool, Metrics: reg,
		Limits: s.Limits, Shared: shared, SharedFailClosed: s.RedisFailClosed,
		LeaseTTL: s.LeaseTTL, Owner: d.store.Instance(), MaxImageBytes: s.MaxImageBytes})
	if err != nil {
		pool.Close()
		stopShared()
		return nil, nil, err
	}
	return rt, func() error { stopShared(); return pool.Close() }, nil
}

// openShared starts counting limits in the Redis of PARLEY_REDIS_URL,
// shared by every server that names it; without one, it returns nil and
// each server counts its own. stop writes what is pending and closes the
// connections: call it after the runtime has shut down, so the streams
// its runs ended are released.
func openShared(s Settings, log *slog.Logger, reg prometheus.Registerer) (l *redislimit.Limiter, stop func(), err error) {
	if s.RedisURL == "" {
		return nil, func() {}, nil
	}
	// The client library logs every failed dial, once a second while Redis
	// is down; the limiter logs the transitions that matter, once each.
	// The library's logger is global: this is the one place that sets it.
	redis.SetLogger(redisDriverLog{log})
	l, err = redislimit.Open(s.RedisURL, redislimit.Options{Logger: log, Metrics: reg})
	if err != nil {
		return nil, nil, fmt.Errorf("PARLEY_REDIS_URL: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	return l, func() {
		cancel()
		<-done
		_ = l.Close()
	}, nil
}

// data is what the commands that touch tenants work with: the settings,
// the migrated database and the platform service over it.
type data struct {
	settings Settings
	log      *slog.Logger
	store    *store.Store
	platform *platform.Service
	where    credentialSources
}

// openData reads the settings, opens and migrates the database and builds
// the platform service. server opens them for the server: it holds an
// SQLite database for itself, and loads or generates the platform token,
// which the command-line tools do not need: they act as the operator
// directly.
func (m *Main) openData(ctx context.Context, server bool) (*data, error) {
	settings, err := LoadSettings(m.Getenv)
	if err != nil {
		return nil, err
	}
	return m.openDataWith(ctx, settings, server)
}

// openDataWith is openData with the settings already read.
func (m *Main) openDataWith(ctx context.Context, settings Settings, server bool) (*data, error) {
	var err error
	d := &data{settings: settings, log: m.logger(settings)}
	if d.store, err = openStore(ctx, settings, d.log, server); err != nil {
		return nil, err
	}
	if d.platform, d.where, err = openPlatform(settings, d.store, d.log, server); err != nil {
		d.store.Close()
		return nil, err
	}
	return d, nil
}

// Close closes the database.
func (d *data) Close() error { return d.store.Close() }

// announce says what the server uses; never a secret value, only where
// it lives. The last line names the bound address, which tests read to
// find a server started on port 0.
func (m *Main) announce(st *store.Store, where credentialSources, settings Settings, metricsAddr, addr string) {
	fmt.Fprintf(m.Stdout, "Database:        %s at %s\n", st.Dialect(), st.Location())
	fmt.Fprintf(m.Stdout, "Secrets key:     %s\n", where.secretKey)
	fmt.Fprintf(m.Stdout, "Platform token:  %s\n", where.platformToken)
	fmt.Fprintf(m.Stdout, "Model provider:  %s at %s, default model %s\n", settings.LLMProvider, settings.LLMBaseURL, settings.LLMModel)
	if settings.LLMAPIKey == "" {
		// Said at start, not at the first reply: a bot that cannot answer
		// looks broken to someone trying Parley for the first time.
		fmt.Fprintf(m.Stdout, "Warning:         no PARLEY_LLM_API_KEY is set, so replies from %s will fail; set one, or use `make run` for the bundled fake model\n", settings.LLMBaseURL)
	}
	if metricsAddr != "" {
		fmt.Fprintf(m.Stdout, "Metrics on http://%s/metrics\n", metricsAddr)
	}
	fmt.Fprintf(m.Stdout, "Parley listening on http://%s\n", addr)
}

// runServer serves until ctx ends, then stops accepting, lets requests in
// flight finish for up to shutdownTimeout and closes the rest.
func runServer(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("parley shutting down", "timeout", shutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		srv.Close()
		return fmt.Errorf("shutdown: requests still running after %s were cut off: %w", shutdownTimeout, err)
	}
	log.Info("parley stopped")
	return nil
}

// credentialSources says where the secrets key and platform token came
// from, for the start-up message.
type credentialSources struct {
	secretKey, platformToken string
}

// openPlatform builds the platform service over st, with the platform
// token when withToken is set.
func openPlatform(s Settings, st *store.Store, log *slog.Logger, withToken bool) (*platform.Service, credentialSources, error) {
	var where credentialSources
	key, keySource, err := secretsKey(s)
	if err != nil {
		return nil, where, err
	}
	where.secretKey = keySource
	sealer, err := auth.NewSealer(key)
	if err != nil {
		return nil, where, err
	}
	authz, err := auth.NewAuthorizer()
	if err != nil {
		return nil, where, err
	}
	policy, err := outboundPolicy(s)
	if err != nil {
		return nil, where, err
	}
	catalog, err := llm.LoadCatalog(configs.Models())
	if err != nil {
		return nil, where, fmt.Errorf("model catalog: %w", err)
	}
	embedders, err := serverEmbedders(s, log)
	if err != nil {
		return nil, where, err
	}
	opts := platform.Options{Sealer: sealer, Authorizer: authz, Clock: time.Now, Logger: log, Compile: configOptions(s).LoadAndCompile,
		ServerProviders: s.providerNames(), ServerModels: s.serverModels(catalog), OutboundPolicy: &policy, Embedders: embedders,
		OIDC: s.OIDC}
	if withToken {
		opts.PlatformToken, where.platformToken, err = platformToken(s)
		if err != nil {
			return nil, where, err
		}
	}
	svc, err := platform.New(st, opts)
	return svc, where, err
}

// secretsKey is PARLEY_SECRET_KEY, or the key file in the data dir, made on
// first use so the embedded default encrypts secrets with no setup.
func secretsKey(s Settings) ([]byte, string, error) {
	if s.SecretKey != "" {
		key, err := auth.ParseKey(s.SecretKey)
		if err != nil {
			return nil, "", fmt.Errorf("PARLEY_SECRET_KEY: %w", err)
		}
		return key, "from PARLEY_SECRET_KEY", nil
	}
	path := filepath.Join(s.DataDir, secretKeyFile)
	key, err := auth.LoadOrCreateKeyFile(path)
	if err != nil {
		return nil, "", err
	}
	return key, "key file " + path + " (back it up: losing it loses every tenant secret)", nil
}

// platformToken is PARLEY_PLATFORM_TOKEN, or a token generated once into
// the data dir and reused after. The file is made like the secrets key file
// (256 random bits, base64, mode 0600, refused when others may read it), and
// its one line is the token, ready to paste into an Authorization header.
func platformToken(s Settings) (string, string, error) {
	if s.PlatformToken != "" {
		return s.PlatformToken, "from PARLEY_PLATFORM_TOKEN", nil
	}
	path := filepath.Join(s.DataDir, platformTokenFile)
	raw, err := auth.LoadOrCreateKeyFile(path)
	if err != nil {
		return "", "", fmt.Errorf("platform token file: %w", err)
	}
	return base64.StdEncoding.EncodeToString(raw), "in " + path + " (mode 0600; use its content as a bearer token)", nil
}

// retentionSweepEvery is how often serve deletes the dialogs that
// outlived their tenant's retention period.
const retentionSweepEvery = time.Minute

// sweepRetention deletes expired dialogs until ctx ends: every
// retentionSweepEvery, batch after batch while batches come back full of
// work, so a backlog drains without one long transaction.
func sweepRetention(ctx context.Context, rt *dialog.Runtime, log *slog.Logger) {
	tick := time.NewTicker(retentionSweepEvery)
	defer tick.Stop()
	for {
		for ctx.Err() == nil {
			got, err := rt.Dialogs().SweepRetention(ctx)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("retention sweep failed; retrying at the next", "err", err)
				}
				break
			}
			if got.Dialogs == 0 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// idleSweepEvery is how often serve computes the outcome of dialogs that
// went quiet (docs/insights.md).
const idleSweepEvery = time.Minute

// sweepIdle settles quiet dialogs until ctx ends: every idleSweepEvery,
// batch after batch while batches come back full.
func sweepIdle(ctx context.Context, rt *dialog.Runtime, log *slog.Logger) {
	tick := time.NewTicker(idleSweepEvery)
	defer tick.Stop()
	for {
		for ctx.Err() == nil {
			n, err := rt.Insights().SweepIdle(ctx)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("idle dialog sweep failed; retrying at the next", "err", err)
				}
				break
			}
			if n < dialog.IdleBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// redisDriverLog sends the Redis client library's own messages to the
// debug log.
type redisDriverLog struct{ log *slog.Logger }

func (l redisDriverLog) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, "redis client: "+fmt.Sprintf(format, v...))
}
