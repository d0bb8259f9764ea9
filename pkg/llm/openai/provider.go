package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/parleyhq/parley/pkg/llm"
)

// Config configures a Provider. Only the API key (for hosted services) is
// usually needed; every other field has a default.
type Config struct {
	// Name identifies the provider in events, metrics and errors; default "openai".
	Name string
	// BaseURL is the API root, ending in /v1 for OpenAI-compatible servers;
	// default https://api.openai.com/v1. See the package doc for others.
	BaseURL string
	// APIKey is sent as a bearer token (or the api-key header on Azure).
	APIKey string
	// APIType is "" or "openai" for OpenAI-compatible servers, or "azure"
	// for Azure OpenAI, where BaseURL is the resource endpoint and the model
	// names the deployment.
	APIType string
	// APIVersion is Azure's api-version; default "2024-10-21".
	APIVersion string
	// Headers are sent with every request (a gateway's own).
	Headers map[string]string
	// HTTPClient sends each attempt; default a pooled client over net/http's
	// Transport (see the package doc). Retries wrap it.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed attempt is retried; 0 means 2,
	// negative means never.
	MaxRetries int
	// RetryWaitMin and RetryWaitMax bound the jittered exponential backoff;
	// defaults 500ms and 8s.
	RetryWaitMin, RetryWaitMax time.Duration
	// MaxRetryAfter is the longest Retry-After the provider waits out
	// itself; a longer one is returned as the error's RetryAfter. Default 20s.
	MaxRetryAfter time.Duration
	// DisableStreamUsage stops asking for usage in streams, for servers that
	// reject stream_options.
	DisableStreamUsage bool
	// Logger receives retry notices; nil logs nothing.
	Logger *slog.Logger
}

// Provider is an llm.Provider for OpenAI-compatible chat-completions APIs.
// It is safe for concurrent use.
type Provider struct {
	name        string
	errs        llm.Failures // makes its errors, which never hold the API key
	client      *goopenai.Client
	streamUsage bool
}

var _ llm.Provider = (*Provider)(nil)

// New returns a provider for cfg; it fails on a base URL or API type it
// cannot use.
func New(cfg Config) (*Provider, error) {
	cfg = withDefaults(cfg)
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	var cc goopenai.ClientConfig
	switch strings.ToLower(cfg.APIType) {
	case "", "openai":
		cc = goopenai.DefaultConfig(cfg.APIKey)
		cc.BaseURL = cfg.BaseURL
	case "azure":
		cc = goopenai.DefaultAzureConfig(cfg.APIKey, cfg.BaseURL)
		cc.APIVersion = cfg.APIVersion
	default:
		return nil, fmt.Errorf("openai: API type %q is not one of openai, azure", cfg.APIType)
	}
	cc.HTTPClient = doer{client: newRetryClient(cfg), headers: cfg.Headers}
	return &Provider{
		name:        cfg.Name,
		errs:        llm.NewFailures(cfg.Name, cfg.APIKey),
		client:      goopenai.NewClientWithConfig(cc),
		streamUsage: !cfg.DisableStreamUsage,
	}, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Name == "" {
		cfg.Name = "openai"
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.openai.com/v1"
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	if cfg.APIVersion == "" {
		cfg.APIVersion = "2024-10-21"
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = 2
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.RetryWaitMin <= 0 {
		cfg.RetryWaitMin = 500 * time.Millisecond
	}
	if cfg.RetryWaitMax < cfg.RetryWaitMin {
		cfg.RetryWaitMax = max(8*time.Second, cfg.RetryWaitMin)
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = 20 * time.Second
	}
	return cfg
}

// Name identifies the provider.
func (p *Provider) Name() string { return p.name }

// Complete runs one non-streaming completion.
func (p *Provider) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	creq, patch, err := p.chatRequest(req, false)
	if err != nil {
		return nil, p.errs.BadRequest("%v", err)
	}
	c := &call{patch: patch}
	resp, err := p.client.CreateChatCompletion(withCall(ctx, c), *creq)
	if err != nil {
		return nil, p.toError(ctx, c, err)
	}
	out, ok := fromChatResponse(resp)
	if !ok {
		return nil, &llm.Error{Kind: llm.ErrServer, Provider: p.name, Message: "the response holds no choices", Retryable: true}
	}
	return out, nil
}

// Stream runs one streaming completion, calling onDelta for each text or
// tool-call fragment, and returns the assembled response. A stream that
// breaks off is a retryable network error; it is never retried here,
// because onDelta has already seen part of it.
func (p *Provider) Stream(ctx context.Context, req *llm.Request, onDelta func(llm.Delta)) (*llm.Response, error) {
	creq, patch, err := p.chatRequest(req, true)
	if err != nil {
		return nil, p.errs.BadRequest("%v", err)
	}
	c := &call{patch: patch}
	stream, err := p.client.CreateChatCompletionStream(withCall(ctx, c), *creq)
	if err != nil {
		return nil, p.toError(ctx, c, err)
	}
	defer stream.Close()
	return p.readStream(ctx, c, stream, onDelta)
}

// chatRequest maps req onto go-openai's request, a streaming one when
// stream is set, and returns the body fields go-openai cannot express.
func (p *Provider) chatRequest(req *llm.Request, stream bool) (*goopenai.ChatCompletionRequest, map[string]any, error) {
	creq, patch, err := toChatRequest(req)
	if err != nil || !stream {
		return creq, patch, err
	}
	if p.streamUsage {
		creq.StreamOptions = &goopenai.StreamOptions{IncludeUsage: true}
	}
	return creq, patch, nil
}

// readStream assembles the reply from the stream's chunks.
func (p *Provider) readStream(ctx context.Context, c *call, stream *goopenai.ChatCompletionStream, onDelta func(llm.Delta)) (*llm.Response, error) {
	asm := newAssembler(onDelta)
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, p.toError(ctx, c, err)
			}
			var apiErr *goopenai.APIError
			if errors.As(err, &apiErr) {
				return nil, p.toError(ctx, c, err) // an error event inside the stream
			}
			return nil, p.errs.StreamCut(err)
		}
		asm.add(chunk)
	}
	if !asm.finished() {
		return nil, p.errs.StreamCut(nil)
	}
	return asm.response(), nil
}
