package httptool

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/httpretry"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool"
)

// Defaults for Options fields left zero.
const (
	DefaultMaxRetries = 2
	DefaultBackoff    = 200 * time.Millisecond
	// maxBackoff keeps a retry from eating a short tool timeout.
	maxBackoff = 2 * time.Second
)

// Options tune HTTP tools. The zero value uses the defaults.
type Options struct {
	// MaxBodyBytes caps the response body kept for the model; 0 means
	// outbound.DefaultMaxBodyBytes (64 KiB).
	MaxBodyBytes int64
	// MaxRetries is how many times an idempotent request is retried after a
	// connection error or a 502/503/504; 0 means DefaultMaxRetries, a
	// negative value disables retries.
	MaxRetries int
	// Backoff is the wait before the first retry, doubled for each next one;
	// 0 means DefaultBackoff.
	Backoff time.Duration
	// Logger receives one debug line per call (no secrets); nil logs nothing.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = outbound.DefaultMaxBodyBytes
	}
	switch {
	case o.MaxRetries == 0:
		o.MaxRetries = DefaultMaxRetries
	case o.MaxRetries < 0:
		o.MaxRetries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	return o
}

// Tool is one config endpoint bound to a dialog's variables.
type Tool struct {
	spec     botconfig.ToolSpec
	client   *http.Client
	vars     botconfig.Vars
	retry    *retryablehttp.Client // client with retries, for idempotent methods
	opts     Options
	redactor *redactor
}

// ephemeralTool is a Tool whose config asks to keep only its latest
// outputs; a separate type because tool.Ephemeral is detected by interface,
// and KeepLast() returning 0 would mean "keep none".
type ephemeralTool struct{ *Tool }

// KeepLast implements tool.Ephemeral.
func (t ephemeralTool) KeepLast() int { return t.spec.Ephemeral }

// New returns the tool for spec, sending requests through client (which
// must come from outbound.NewClient) with the dialog's vars. The result
// implements tool.ConfirmationRequired, and tool.Ephemeral when the config
// sets "ephemeral".
func New(spec botconfig.ToolSpec, client *http.Client, vars botconfig.Vars, opts Options) (tool.Tool, error) {
	if spec.Endpoint == nil {
		return nil, fmt.Errorf("httptool: tool %q has no endpoint (client-executed tools are not HTTP tools)", spec.Name)
	}
	if client == nil {
		return nil, errors.New("httptool: no HTTP client; pass the one from outbound.NewClient")
	}
	opts = opts.withDefaults()
	t := &Tool{spec: spec, client: client, vars: vars, opts: opts, redactor: newRedactor(vars),
		retry: httpretry.New(client, opts.MaxRetries, opts.Backoff, maxBackoff, retryable)}
	if spec.Ephemeral > 0 {
		return ephemeralTool{t}, nil
	}
	return t, nil
}

// Definition implements tool.Tool.
func (t *Tool) Definition() tool.Definition {
	return tool.Definition{Name: t.spec.Name, Description: t.spec.Description, Parameters: t.spec.Parameters}
}

// RequiresConfirmation implements tool.ConfirmationRequired.
func (t *Tool) RequiresConfirmation() bool { return t.spec.RequiresConfirmation }
