package anthropic

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/parleyhq/parley/pkg/llm"
)

// Kind is the provider kind this package implements, as thinking blocks
// record it (llm.Thinking.Provider).
const Kind = "anthropic"

// apiVersion is the Messages API version every request names.
const apiVersion = "2023-06-01"

// Config configures a Provider. Only the API key is usually needed.
type Config struct {
	// Name identifies the provider in events, metrics and errors; default
	// "anthropic".
	Name string
	// BaseURL is the API root, without /v1; default https://api.anthropic.com.
	BaseURL string
	// APIKey is sent as the x-api-key header.
	APIKey string
	// Headers are sent with every request (a proxy's or gateway's own).
	Headers map[string]string
	// HTTPClient sends each attempt; default a pooled client with small
	// connection buffers. Tenant-controlled base URLs must come with a
	// client from pkg/outbound.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed attempt is retried; 0 means 2,
	// negative means never.
	MaxRetries int
	// MaxRetryAfter is the longest retry-after the provider waits out
	// itself; a longer one is returned as the error's RetryAfter. Default 20s.
	MaxRetryAfter time.Duration
	// DefaultMaxTokens is sent when a request names no max_tokens, which
	// the API requires; default 4096.
	DefaultMaxTokens int
	// DisablePromptCache sends no cache_control breakpoints.
	DisablePromptCache bool
}

// Provider is an llm.Provider for Anthropic's Messages API. It is safe for
// concurrent use.
type Provider struct {
	name      string
	errs      llm.Failures // makes its errors, which never hold the API key
	client    sdk.Client
	maxTokens int
	cache     bool
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider for cfg; it fails on a base URL it cannot use.
func New(cfg Config) (*Provider, error) {
	cfg = withDefaults(cfg)
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("anthropic: base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	opts := []option.RequestOption{
		// The SDK would otherwise read ANTHROPIC_API_KEY and friends from
		// the environment: a tenant's provider must use its own key only.
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(cfg.BaseURL + "/"),
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithMaxRetries(cfg.MaxRetries),
		option.WithHeader("anthropic-version", apiVersion),
		option.WithMiddleware(retryPolicy{maxRetryAfter: cfg.MaxRetryAfter}.middleware),
	}
	for k, v := range cfg.Headers {
		opts = append(opts, option.WithHeader(k, v))
	}
	return &Provider{
		name:      cfg.Name,
		errs:      llm.NewFailures(cfg.Name, cfg.APIKey),
		client:    sdk.NewClient(opts...),
		maxTokens: cfg.DefaultMaxTokens,
		cache:     !cfg.DisablePromptCache,
	}, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Name == "" {
		cfg.Name = Kind
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.anthropic.com"
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = 2
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 20 * time.Second
	}
	if cfg.DefaultMaxTokens <= 0 {
		cfg.DefaultMaxTokens = 4096
	}
	if cfg.HTTPClient == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// A reply may hold a connection for minutes; with many streams
		// open, net/http's 4 KiB buffers per connection add up.
		t.ReadBufferSize, t.WriteBufferSize = 1<<10, 1<<10
		cfg.HTTPClient = &http.Client{Transport: t}
	}
	return cfg
}

// Name identifies the provider.
func (p *Provider) Name() string { return p.name }

// Complete runs one non-streaming completion.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, p.errs.BadRequest("%v", err)
	}
	c := &call{}
	msg, err := p.client.Messages.New(withCall(ctx, c), params)
	if err != nil {
		return nil, p.toError(ctx, c, err)
	}
	return fromMessage(msg), nil
}

// Stream runs one streaming completion, calling onDelta for each text,
// thinking or tool-input fragment, and returns the assembled response. A
// stream that breaks off is a retryable network error; it is never retried
// here, because onDelta has already seen part of it.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	params, err := p.params(req)
	if err != nil {
		return nil, p.errs.BadRequest("%v", err)
	}
	c := &call{}
	stream := p.client.Messages.NewStreaming(withCall(ctx, c), params)
	defer stream.Close()
	asm := assembler{onDelta: onDelta}
	for stream.Next() {
		if err := asm.add(stream.Current()); err != nil {
			return nil, p.errs.StreamCut(err)
		}
	}
	if err := stream.Err(); err != nil {
		if asm.started {
			return nil, p.streamError(ctx, c, err)
		}
		return nil, p.toError(ctx, c, err)
	}
	if !asm.stopped {
		return nil, p.errs.StreamCut(nil)
	}
	return fromMessage(&asm.msg), nil
}

// params maps req onto the SDK's request.
func (p *Provider) params(req *llm.Request) (sdk.MessageNewParams, error) {
	return toParams(req, p.maxTokens, p.cache)
}

// call carries per-request state from the SDK's middleware back to the
// provider.
type call struct {
	// retryAfter is the last failed response's requested wait.
	retryAfter time.Duration
	// attempts counts HTTP attempts, retries included.
	attempts int
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}
