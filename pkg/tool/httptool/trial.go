package httptool

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"unicode/utf8"

	"github.com/parleyhq/parley/pkg/botconfig"
	"github.com/parleyhq/parley/pkg/tool"
)

// Trial is one call made for the tool's author (the admin UI's request
// tester): the request as it was sent and the response as it came back,
// beside the Result the model would have read. Every text in it is scrubbed
// of the tenant's secrets, like the Result.
type Trial struct {
	// Request is nil when the request could not be built (Result says why).
	Request *SentRequest
	// Response is nil when no answer came (refused, timed out, ...).
	Response *ReceivedResponse
	Result   tool.Result
}

// SentRequest is a request as the tool sent it.
type SentRequest struct {
	Method string
	URL    string
	Header http.Header
	Body   string
}

// ReceivedResponse is a response as the tool received it; Body is cut at
// the tool's body cap (Truncated says so).
type ReceivedResponse struct {
	Status    int
	Header    http.Header
	Body      string
	Truncated bool
}

// Try calls the tool like Call and reports the exchange. Only the caller's
// own cancellation is an error.
func (t *Tool) Try(ctx context.Context, args json.RawMessage) (Trial, error) {
	var trial Trial
	res, err := t.call(ctx, args, &trial)
	trial.Result = res
	return trial, err
}

// Try tries tt when it is an HTTP tool from New; ok is false for any other
// tool.
func Try(ctx context.Context, tt tool.Tool, args json.RawMessage) (trial Trial, ok bool, err error) {
	switch t := tt.(type) {
	case *Tool:
		trial, err = t.Try(ctx, args)
	case ephemeralTool:
		trial, err = t.Tool.Try(ctx, args)
	default:
		return Trial{}, false, nil
	}
	return trial, true, err
}

// sent records the rendered request; a nil trial (a plain Call) records
// nothing.
func (trial *Trial) sent(t *Tool, r *botconfig.RenderedRequest) {
	if trial == nil {
		return
	}
	req, err := newRequest(context.Background(), r) // for the headers the tool adds
	header := r.Header.Clone()
	if err == nil {
		header = req.Header
	}
	trial.Request = &SentRequest{Method: r.Method, URL: t.redactor.redact(r.URL, r),
		Header: redactHeader(t, header, r), Body: t.redactor.redact(string(r.Body), r)}
}

// receiving tees the response body into a buffer as readResponse reads it,
// so the trial shows the raw body and not only the model's rendering.
// readResponse reads at most one byte past the cap, so the buffer stays
// within it.
func (trial *Trial) receiving(resp *http.Response) *bytes.Buffer {
	if trial == nil {
		return nil
	}
	var raw bytes.Buffer
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, &raw), resp.Body}
	return &raw
}

// received records the response once its body was read.
func (trial *Trial) received(t *Tool, resp *http.Response, raw *bytes.Buffer, r *botconfig.RenderedRequest) {
	if trial == nil {
		return
	}
	body := raw.Bytes()
	truncated := int64(len(body)) > t.opts.MaxBodyBytes
	if truncated {
		body = trimPartialRune(body[:t.opts.MaxBodyBytes])
	}
	text := string(body)
	if !utf8.ValidString(text) {
		text = bodyText(body, resp.Header.Get("Content-Type"), truncated)
	}
	trial.Response = &ReceivedResponse{Status: resp.StatusCode, Header: redactHeader(t, resp.Header, r),
		Body: t.redactor.redact(text, r), Truncated: truncated}
}

func redactHeader(t *Tool, h http.Header, r *botconfig.RenderedRequest) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		for _, v := range vs {
			out[k] = append(out[k], t.redactor.redact(v, r))
		}
	}
	return out
}
