package api

import (
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/inbound"
	"github.com/parleyhq/parley/pkg/platform"
)

// DefaultMaxBodyBytes caps request bodies: room for the largest config
// botconfig accepts plus its JSON envelope.
const DefaultMaxBodyBytes = botconfig.MaxConfigSize + 64<<10

// Options is what the HTTP layer needs from its wiring. Platform, Runtime,
// Logger and Metrics are required.
type Options struct {
	// Platform is the application layer every handler calls; it authorises
	// each operation against the caller's Principal.
	Platform *platform.Service
	// Runtime answers dialogs (dialog.New).
	Runtime *dialog.Runtime
	// Logger receives one line per request and the detail of internal
	// errors.
	Logger *slog.Logger
	// Metrics is the private registry the HTTP metrics join and /metrics
	// serves.
	Metrics *prometheus.Registry
	// MetricsElsewhere leaves /metrics out of the API: another listener
	// serves the registry (PARLEY_METRICS_ADDR), and the public port
	// answers /metrics 404.
	MetricsElsewhere bool
	// MaxBodyBytes caps request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Inbound answers channel messages (inbound.New). Nil serves the
	// channels' routes but no channel: their inbound route answers
	// not_found (an API without channels, in tests).
	Inbound *inbound.Service
	// Web is the static tree served at "/" (web.Files()). Nil serves no
	// page: the API alone.
	Web fs.FS
	// LoginLimit bounds sign-in attempts; nil means DefaultLoginLimit.
	LoginLimit *LoginLimit
	// TrustedProxies are the addresses or CIDRs of reverse proxies whose
	// X-Forwarded-For names the client (for login limits and the audit
	// log); none trusts no header, and the client is the connection's peer.
	TrustedProxies []string
}

// check reports every required dependency that is missing.
func (o Options) check() error {
	var missing []string
	if o.Platform == nil {
		missing = append(missing, "Options.Platform")
	}
	if o.Runtime == nil {
		missing = append(missing, "Options.Runtime")
	}
	if o.Logger == nil {
		missing = append(missing, "Options.Logger")
	}
	if o.Metrics == nil {
		missing = append(missing, "Options.Metrics")
	}

	if len(missing) > 0 {
		return fmt.Errorf("api: %s required", strings.Join(missing, ", "))
	}
	return nil
}

// Handler is Parley's HTTP API. It is an http.Handler.
type Handler struct {
	engine *gin.Engine
}

// Route is one registered method and path template.
type Route struct {
	Method string
	Path   string
}

// New builds the API handler. It fails when a required Option is missing,
// on a broken Options.Web tree, or when the metrics cannot join the
// registry.
func New(opts Options) (*Handler, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	// Release mode silences gin's debug route dump. It is a process-wide
	// setting in gin, and every caller wants the same value, so setting it
	// here is idempotent.
	gin.SetMode(gin.ReleaseMode)
	s, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	e := gin.New()
	e.HandleMethodNotAllowed = true
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.ContextWithFallback = true
	if err := e.SetTrustedProxies(opts.TrustedProxies); err != nil {
		return nil, fmt.Errorf("api: trusted proxies: %w", err)
	}
	s.register(e)
	return &Handler{engine: e}, nil
}

// ServeHTTP serves one request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.engine.ServeHTTP(w, r)
}

// Routes lists every registered route, so tests can check each is covered.
func (h *Handler) Routes() []Route {
	var out []Route
	for _, r := range h.engine.Routes() {
		out = append(out, Route{Method: r.Method, Path: r.Path})
	}
	return out
}

// server holds what handlers share.
type server struct {
	platform    *platform.Service
	runtime     *dialog.Runtime
	inbound     *inbound.Service
	log         *slog.Logger
	registry    *prometheus.Registry
	metrics     *httpMetrics
	streams     prometheus.Gauge // open event streams
	maxBody     int64
	landingPage []byte
	// web is the static tree (Options.Web) the admin UI and widget come from.
	web fs.FS
	// logins limits sign-in attempts per email and per client address.
	logins *loginLimiter
	// signIns counts sign-in attempts by outcome.
	signIns *prometheus.CounterVec
	// metricsElsewhere is Options.MetricsElsewhere.
	metricsElsewhere bool
	// knowledge holds the knowledge bases' metrics.
	knowledge *knowledgeMetrics
}

func newServer(opts Options) (*server, error) {
	s := &server{
		platform: opts.Platform,
		runtime:  opts.Runtime,
		inbound:  opts.Inbound,
		log:      opts.Logger,
		registry: opts.Metrics,
		maxBody:  opts.MaxBodyBytes,
		web:      opts.Web,

		metricsElsewhere: opts.MetricsElsewhere,
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	limit := DefaultLoginLimit
	if opts.LoginLimit != nil {
		limit = *opts.LoginLimit
	}
	s.logins = newLoginLimiter(limit, time.Now)
	s.signIns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "parley_sign_ins_total",
		Help: "Admin UI sign-in attempts (logins and invite acceptances) by outcome: ok, refused, rate_limited."}, []string{"outcome"})
	s.metrics = newHTTPMetrics()
	s.streams = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "parley_active_streams", Help: "Event streams (SSE) open right now."})
	s.knowledge = newKnowledgeMetrics(s.platform)
	for _, c := range []prometheus.Collector{s.metrics.requests, s.metrics.duration, s.streams, s.signIns, s.knowledge} {
		if err := s.registry.Register(c); err != nil {
			return nil, fmt.Errorf("api: metrics: %w", err)
		}
	}
	page, err := loadLanding(opts.Web)
	if err != nil {
		return nil, err
	}
	s.landingPage = page
	return s, nil
}
