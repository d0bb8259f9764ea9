package httptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/httpretry"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool"
)

// Call implements tool.Tool. Every failure the model can act on (a bad
// argument, a refused destination, a timeout, a non-2xx status) comes back as
// an is_error Result; only the caller's own cancellation is a Go error.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	return t.call(ctx, args, nil)
}

// call is Call that, given a Trial, also records in it what was sent and
// received (trial.go).
func (t *Tool) call(ctx context.Context, args json.RawMessage, trial *Trial) (tool.Result, error) {
	start := time.Now()
	rendered, err := t.spec.Endpoint.Render(args, t.vars)
	if err != nil {
		return t.finish(start, nil, tool.Errorf(fmt.Sprintf("cannot build the request: %v", err))), nil
	}
	trial.sent(t, rendered)
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
	raw := trial.receiving(resp)
	res, err := t.readResponse(resp, rendered)
	trial.received(t, resp, raw, rendered)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		res = tool.Errorf(t.describeFailure(err, rendered, timeout))
		res.Meta.Status = resp.StatusCode
	}
	return t.finish(start, rendered, res), nil
}

// send performs the request. Idempotent methods go through the retrying
// client, which retries connection errors and gateway statuses while time
// remains; POST and PATCH are sent once, since the server may have acted
// on the first attempt.
func (t *Tool) send(ctx context.Context, r *botconfig.RenderedRequest) (*http.Response, error) {
	req, err := newRequest(ctx, r)
	if err != nil {
		return nil, err
	}
	if !idempotent(r.Method) {
		return t.client.Do(req)
	}
	rreq, err := retryablehttp.FromRequest(req)
	if err != nil {
		return nil, err
	}
	return t.retry.Do(rreq)
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
// connection errors, but not refusals, timeouts or unknown hosts, nor a
// status whose Retry-After asks for a longer pause than a dialog can wait
// (its answer is more useful to the model than a timeout).
func retryable(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err == nil {
		switch resp.StatusCode {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			after, ok := httpretry.RetryAfter(resp.Header)
			return !ok || after <= maxBackoff, nil
		}
		return false, nil
	}
	var denied *outbound.DeniedError
	var redirect *outbound.RedirectError
	var dns *net.DNSError
	switch {
	case errors.As(err, &denied), errors.As(err, &redirect):
		return false, nil
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return false, nil
	case errors.As(err, &dns) && dns.IsNotFound:
		return false, nil
	}
	return true, nil
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
