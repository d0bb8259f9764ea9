package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/parleyhq/parley/pkg/httpretry"
)

// call carries per-request state between the provider and its HTTP layer,
// which go-openai sits between and cannot pass through.
type call struct {
	// patch is merged into the JSON body: Request.Extra and the fields
	// go-openai cannot express (temperature 0, which its omitempty drops).
	patch map[string]any
	// retryAfter is the last failed response's requested wait.
	retryAfter time.Duration
	// attempts counts HTTP attempts, retries included.
	attempts int
	// reused and wrote describe the current attempt's connection: whether
	// it had served an earlier request, and whether the whole request was
	// written to it. The transport reports them from its own goroutines.
	reused, wrote atomic.Bool
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	ctx = context.WithValue(ctx, callKey{}, c)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn:      func(info httptrace.GotConnInfo) { c.reused.Store(info.Reused) },
		WroteRequest: func(info httptrace.WroteRequestInfo) { c.wrote.Store(info.Err == nil) },
	})
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// doer is the go-openai HTTP client: it merges the body patch, then sends
// through the retrying client and remembers what the final response asked.
type doer struct {
	client  *retryablehttp.Client
	headers map[string]string
}

func (d doer) Do(req *http.Request) (*http.Response, error) {
	c := callFrom(req.Context())
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("reading request body: %w", err)
		}
		if c != nil && len(c.patch) > 0 {
			if body, err = mergeBody(body, c.patch); err != nil {
				return nil, err
			}
		}
	}
	var raw any // nil sends no body
	if body != nil {
		raw = body
	}
	rreq, err := retryablehttp.NewRequestWithContext(req.Context(), req.Method, req.URL.String(), raw)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	rreq.Header = req.Header
	for k, v := range d.headers {
		rreq.Header.Set(k, v)
	}
	resp, err := d.client.Do(rreq)
	if c != nil && resp != nil && resp.StatusCode >= 400 {
		c.retryAfter, _ = httpretry.RetryAfter(resp.Header)
	}
	return resp, err
}

// newRetryClient builds the retrying HTTP client. Retries happen inside
// Do, before response headers are returned, so a stream whose body has
// started is never replayed.
func newRetryClient(cfg Config) *retryablehttp.Client {
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Transport: newTransport()}
	}
	p := retryPolicy{maxRetryAfter: cfg.MaxRetryAfter}
	rc := httpretry.New(withDrain(hc), cfg.MaxRetries, cfg.RetryWaitMin, cfg.RetryWaitMax, p.check)
	if cfg.Logger != nil {
		rc.Logger = cfg.Logger
	}
	rc.RequestLogHook = func(_ retryablehttp.Logger, req *http.Request, _ int) {
		if c := callFrom(req.Context()); c != nil {
			c.attempts++
			c.reused.Store(false)
			c.wrote.Store(false)
		}
	}
	return rc
}

// newTransport is the default transport, tuned as pkg/outbound tunes its
// own, except that it honours the environment's proxy settings (the model
// server is the operator's, not a tenant's) and keeps up to 100 idle
// connections per host: a plain-HTTP model server is usually one nearby
// host that every dialog calls at once, each call on a connection of its
// own.
func newTransport() *http.Transport {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           100,
		MaxIdleConnsPerHost:    100,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
}

// retryPolicy holds the retry settings of one provider.
type retryPolicy struct {
	maxRetryAfter time.Duration
}

// check decides whether a response or transport error is worth another try:
// rate limits that pass with time, 5xx and connection failures are; client
// errors, a spent quota and waits longer than the caller accepts are not.
// A request written to a reused connection that then failed is not sent
// again: the server may have received it and be answering, and a chat
// completion is paid for by the token.
func (p retryPolicy) check(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		if c := callFrom(ctx); c != nil && c.reused.Load() && c.wrote.Load() {
			return false, nil
		}
		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
	}
	retryable := resp.StatusCode == http.StatusTooManyRequests ||
		(resp.StatusCode >= 500 && resp.StatusCode != http.StatusNotImplemented)
	if !retryable {
		return false, nil
	}
	if resp.StatusCode == http.StatusTooManyRequests && isQuotaExhausted(resp) {
		return false, nil
	}
	if wait, ok := httpretry.RetryAfter(resp.Header); ok && wait > p.maxRetryAfter {
		return false, nil // the caller decides whether to wait that long
	}
	return true, nil
}

// isQuotaExhausted peeks at a 429 body for OpenAI's spend-limit code and
// puts the body back for the error decoder.
func isQuotaExhausted(resp *http.Response) bool {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	return bytes.Contains(raw, []byte("insufficient_quota"))
}
