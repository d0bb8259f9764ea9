package httptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool"
)

// Call implements tool.Tool. Every failure the model can act on (a bad
// argument, a refused destination, a timeout, a non-2xx status) comes back as
// an is_error Result; only the caller's own cancellation is a Go error.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	start := time.Now()
	rendered, err := t.spec.Endpoint.Render(args, t.vars)
	if err != nil {
		return t.finish(start, nil, tool.Errorf(fmt.Sprintf("cannot build the request: %v", err))), nil
	}
	timeout := rendered.Timeout
	if timeout <= 0 {
		timeout = botconfig.DefaultEndpointTimeout
	}
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	resp, err := t.send(callCtx, rendered)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return t.finish(start, rendered, tool.Errorf(t.describeFailure(err, rendered, timeout))), nil
	}
	defer resp.Body.Close()
	res, err := t.readResponse(resp, rendered)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		res = tool.Errorf(t.describeFailure(err, rendered, timeout))
		res.Meta.Status = resp.StatusCode
	}
	return t.finish(start, rendered, res), nil
}

// send performs the request, retrying idempotent methods on connection
// errors and gateway statuses while time remains.
func (t *Tool) send(ctx context.Context, r *botconfig.RenderedRequest) (*http.Response, error) {
	retries := 0
	if idempotent(r.Method) {
		retries = t.opts.MaxRetries
	}
	for attempt := 0; ; attempt++ {
		req, err := newRequest(ctx, r)
		if err != nil {
			return nil, err
		}
		resp, err := t.client.Do(req)
		if attempt >= retries || !retryable(resp, err) {
			return resp, err
		}
		wait := backoff(t.opts.Backoff, attempt)
		if resp != nil {
			if after, ok := retryAfter(resp); ok {
				if after > maxBackoff {
					// The server asks for a longer pause than a dialog can
					// wait; its answer is more useful to the model than a
					// timeout.
					return resp, nil
				}
				wait = after
			}
			drain(resp)
		}
		if !sleep(ctx, wait) {
			if err == nil {
				err = ctx.Err()
			}
			return nil, err
		}
	}
}

func newRequest(ctx context.Context, r *botconfig.RenderedRequest) (*http.Request, error) {
	// A nil body must stay a nil io.Reader: a typed nil would make net/http
	// send an empty chunked body.
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, r.Method, r.URL, body)
	if err != nil {
		return nil, fmt.Errorf("the rendered URL is not valid: %w", err)
	}
	req.Header = r.Header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json, text/*;q=0.9, */*;q=0.5")
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "Parley-Tool/1")
	}
	return req, nil
}

// idempotent methods may be sent twice without changing the outcome.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// retryable reports failures another attempt may fix: gateway statuses and
// connection errors, but not refusals, timeouts or unknown hosts.
func retryable(resp *http.Response, err error) bool {
	if err == nil {
		switch resp.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	var denied *outbound.DeniedError
	var redirect *outbound.RedirectError
	var dns *net.DNSError
	switch {
	case errors.As(err, &denied), errors.As(err, &redirect):
		return false
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return false
	case errors.As(err, &dns) && dns.IsNotFound:
		return false
	}
	return true
}

// retryAfter reads a Retry-After header given in seconds (the HTTP-date form
// is rare for the statuses retried here and is ignored).
func retryAfter(resp *http.Response) (time.Duration, bool) {
	seconds, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After")))
	if err != nil || seconds < 0 {
		return 0, false
	}
	return time.Duration(seconds) * time.Second, true
}

// backoff doubles base per attempt, with jitter so a fleet of dialogs
// hitting one flaky API does not retry in lockstep.
func backoff(base time.Duration, attempt int) time.Duration {
	d := min(base<<attempt, maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// sleep waits d or until ctx ends, reporting whether the wait completed.
func sleep(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// finish stamps the metadata and scrubs secrets from the content, the last
// step before anything leaves the tool.
func (t *Tool) finish(start time.Time, rendered *botconfig.RenderedRequest, res tool.Result) tool.Result {
	res.Content = t.redactor.redact(res.Content, rendered)
	res.Meta.Kind = "http"
	res.Meta.Duration = time.Since(start)
	if t.opts.Logger != nil {
		t.opts.Logger.Debug("http tool call",
			"tool", t.spec.Name, "method", t.spec.Endpoint.Method(), "origin", t.spec.Endpoint.Origin(),
			"status", res.Meta.Status, "is_error", res.IsError, "truncated", res.Meta.Truncated,
			"duration", res.Meta.Duration)
	}
	return res
}

// drain reads a little of a discarded response so its connection can be
// reused, then closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
