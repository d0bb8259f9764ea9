package openai

import (
	"context"
	"io"
	"net/http"
	"time"
)

// drainLimit is the most Close reads of a body left unfinished: net/http's
// Client reads as much (maxBodySlurpSize, 2 KiB) of a redirect's body
// before closing it, for the same reason. What go-openai leaves of a
// finished answer is a few bytes: the chunked terminator and perhaps a
// newline.
const drainLimit = 2 << 10

// drainGrace is the longest Close waits for that rest to arrive: net/http's
// Transport waits as long (maxWriteWaitBeforeConnReuse, 50 ms) for an
// unfinished request write before giving up on reusing its connection. A
// finished answer's rest is already sent; a stream that is still going
// (one Parley abandoned on an error event) is not waited for longer.
const drainGrace = 50 * time.Millisecond

// drainOnClose is the transport under go-openai: its response bodies, closed
// before their end, read a short rest first so the connection can be
// reused. go-openai decodes a JSON answer, or a stream up to [DONE], and
// closes the body without reading to its end; over HTTP/1.1 net/http then
// closes the connection, so every call to a model server on plain HTTP
// (vLLM, Ollama, LM Studio) would open a new one. Over HTTP/2 the drain
// finds the end at once.
type drainOnClose struct{ rt http.RoundTripper }

func (d drainOnClose) RoundTrip(req *http.Request) (*http.Response, error) {
	// A context of the request's own, which Close cancels to cut a drain
	// short: net/http then stops the read and drops the connection.
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := d.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &drainingBody{ReadCloser: resp.Body, ctx: ctx, cancel: cancel}
	return resp, nil
}

// drainingBody is a response body whose Close reads at most drainLimit
// bytes more, for at most drainGrace, and never once the request's context
// has ended (a cancelled turn), before closing.
type drainingBody struct {
	io.ReadCloser
	ctx    context.Context
	cancel context.CancelFunc
}

func (b *drainingBody) Close() error {
	defer b.cancel()
	if b.ctx.Err() == nil {
		timer := time.AfterFunc(drainGrace, b.cancel)
		_, _ = io.CopyN(io.Discard, b.ReadCloser, drainLimit)
		timer.Stop()
	}
	return b.ReadCloser.Close()
}

// withDrain returns a copy of hc whose transport drains bodies on Close;
// hc's own transport still makes every connection (for a tenant's
// provider, pkg/outbound's, with its checks).
func withDrain(hc *http.Client) *http.Client {
	c := *hc
	rt := c.Transport
	if rt == nil {
		rt = http.DefaultTransport // what hc itself would use
	}
	c.Transport = drainOnClose{rt}
	return &c
}
