package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// call carries per-request state between the provider and its HTTP layer,
// which go-openai sits between and cannot pass through.
type call struct {
	// patch is merged into the JSON body: Request.Extra and the fields
	// go-openai cannot express (temperature 0, which its omitempty drops).
	patch map[string]any
	// body marshals the request body again, as go-openai did, for a
	// retry; nil keeps the first attempt's bytes until the call ends.
	body func() ([]byte, error)
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

// doer is the go-openai HTTP client: it merges the body patch, then sends
// through the retrying client and remembers what the final response asked.
// It keeps no copy of the request body once the first attempt has sent it
// (a retry marshals it again), or, without call.body, one copy until the
// response headers are in: a reply may take minutes to begin, and with
// many streams open every copy of a long conversation counts.
type doer struct{ client *retryablehttp.Client }

func (d doer) Do(req *http.Request) (*http.Response, error) {
	c := callFrom(req.Context())
	body, err := takeBody(req)
	if err != nil {
		return nil, err
	}
	if c != nil && len(c.patch) > 0 && body != nil {
		if body, err = mergeBody(body, c.patch); err != nil {
			return nil, err
		}
	}
	held := &heldBody{b: body}
	var raw any // nil sends no body
	if body != nil {
		raw = retryablehttp.ReaderFunc(held.reader)
	}
	rreq, err := retryablehttp.NewRequestWithContext(req.Context(), req.Method, req.URL.String(), raw)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	if c != nil && c.body != nil {
		held.marshalAgain(c.marshalBody)
	}
	rreq.Header = req.Header
	resp, err := d.client.Do(rreq)
	held.release()
	if c != nil && resp != nil && resp.StatusCode >= 400 {
		c.retryAfter, _ = retryAfter(resp.Header)
	}
	return resp, err
}

// marshalBody marshals the body again for another attempt, patched as Do
// patched the first.
func (c *call) marshalBody() ([]byte, error) {
	body, err := c.body()
	if err != nil || len(c.patch) == 0 {
		return body, err
	}
	return mergeBody(body, c.patch)
}

// retryPolicy holds the retry settings of one provider.
type retryPolicy struct {
	maxRetryAfter time.Duration
}

// newRetryClient builds the retrying HTTP client. Retries happen inside
// Do, before response headers are returned, so a stream whose body has
// started is never replayed. Without Config.HTTPClient, plain-HTTP calls
// go through http1Transport and the rest through net/http's Transport.
func newRetryClient(cfg Config) *retryablehttp.Client {
	rc := retryablehttp.NewClient()
	if cfg.HTTPClient != nil {
		rc.HTTPClient = cfg.HTTPClient
	} else if t, ok := rc.HTTPClient.Transport.(*http.Transport); ok {
		smallBuffers(t)
		rc.HTTPClient.Transport = newHTTP1Transport(t)
	}
	rc.Logger = nil
	if cfg.Logger != nil {
		rc.Logger = cfg.Logger
	}
	rc.RetryMax = cfg.MaxRetries
	rc.RetryWaitMin = cfg.RetryWaitMin
	rc.RetryWaitMax = cfg.RetryWaitMax
	p := retryPolicy{maxRetryAfter: cfg.MaxRetryAfter}
	rc.CheckRetry = p.check
	rc.Backoff = backoff
	rc.ErrorHandler = giveUp
	rc.RequestLogHook = func(_ retryablehttp.Logger, req *http.Request, _ int) {
		if c := callFrom(req.Context()); c != nil {
			c.attempts++
		}
	}
	return rc
}

// Buffer sizes of the default transport's connections. Each connection
// keeps its buffers for its whole life, and a reply may keep it busy for
// minutes while the model thinks, so with many streams open they add up:
// net/http's 4 KiB each were a fifth of the memory of an idle stream. A
// response is read in 1 KiB pieces, which the chunks of a streamed reply
// rarely exceed, and net/http's connections write a request in a few more
// system calls (http1Transport keeps no write buffer).
const (
	connReadBuffer  = 1 << 10
	connWriteBuffer = 1 << 10
)

// smallBuffers gives t's connections connReadBuffer and connWriteBuffer.
func smallBuffers(t *http.Transport) {
	t.ReadBufferSize = connReadBuffer
	t.WriteBufferSize = connWriteBuffer
}

// check decides whether a response or transport error is worth another try:
// rate limits that pass with time, 5xx and connection failures are; client
// errors, a spent quota and waits longer than the caller accepts are not.
func (p retryPolicy) check(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
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
	if wait, ok := retryAfter(resp.Header); ok && wait > p.maxRetryAfter {
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

// backoff waits what the server asked for, else an exponentially growing,
// jittered delay (half fixed, half random) so clients that failed together
// do not retry together.
func backoff(lo, hi time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if wait, ok := retryAfter(resp.Header); ok {
			return wait
		}
	}
	d := hi
	if attempt < 30 && lo<<attempt < hi {
		d = lo << attempt
	}
	if d <= 1 {
		return d
	}
	return d/2 + rand.N(d/2)
}

// giveUp returns the last response when there is one, so its error body
// reaches the caller, instead of retryablehttp's generic "giving up".
func giveUp(resp *http.Response, err error, attempts int) (*http.Response, error) {
	if resp != nil && err == nil {
		return resp, nil
	}
	if resp != nil {
		_ = resp.Body.Close()
	}
	if err == nil {
		err = fmt.Errorf("no response")
	}
	return nil, fmt.Errorf("after %d attempt(s): %w", attempts, err)
}

// retryAfter reads the wait a response asks for: OpenAI's retry-after-ms,
// then Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header) (time.Duration, bool) {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if v, err := strconv.ParseFloat(ms, 64); err == nil && v >= 0 {
			return time.Duration(v * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(secs * float64(time.Second)), true
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(time.Until(at), 0), true
	}
	return 0, false
}
