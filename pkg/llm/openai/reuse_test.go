package openai_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/outbound"
)

const (
	chunkEvent = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi."},"finish_reason":null}]}` + "\n\n"
	stopEvent  = `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"
	errorEvent = `data: {"error":{"message":"The model is overloaded.","type":"server_error"}}` + "\n\n"
)

// Each answer in parts, every part a chunk of its own (no Content-Length),
// as a model server on plain HTTP sends them.
var chunkedAnswers = map[string][]string{
	"chat": {`{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,`,
		`"message":{"role":"assistant","content":"Hi."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`},
	"stream":     {chunkEvent, stopEvent, "data: [DONE]\n\n"},
	"embeddings": {`{"object":"list","model":"m","data":[{"object":"embedding","index":0,`, `"embedding":[0.6,0.8]}],"usage":{"prompt_tokens":1,"total_tokens":1}}`},
}

func answerKind(r *http.Request, body []byte) string {
	switch {
	case r.URL.Path == "/v1/embeddings":
		return "embeddings"
	case bytes.Contains(body, []byte(`"stream":true`)):
		return "stream"
	}
	return "chat"
}

// signalReads is a transport whose response bodies say on read when a
// read returned bytes: the server waits for it before sending the next
// part, so a part, and the end of the answer, never arrive with the one
// before, and the client stops reading where go-openai stops, before the
// end, as it does when a server's last bytes come a moment later.
type signalReads struct {
	rt   http.RoundTripper
	read chan struct{}
}

func (s signalReads) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(req)
	if err == nil {
		resp.Body = signalingBody{resp.Body, s.read}
	}
	return resp, err
}

type signalingBody struct {
	io.ReadCloser
	read chan struct{}
}

func (b signalingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		select {
		case b.read <- struct{}{}:
		default:
		}
	}
	return n, err
}

// chunkedModelServer is a model server on plain HTTP/1.1 that sends its
// answers in parts, each once the client has read the one before, and
// counts the connections opened to it. It returns a provider that reaches
// it as a tenant's does, through the outbound client.
func chunkedModelServer(t *testing.T) (*openai.Provider, *atomic.Int32) {
	t.Helper()
	var conns atomic.Int32
	read := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		for _, part := range chunkedAnswers[answerKind(r, body)] {
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
			select {
			case <-read:
			case <-r.Context().Done():
				return
			}
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return outboundProvider(t, srv, func(rt http.RoundTripper) http.RoundTripper { return signalReads{rt, read} }), &conns
}

// outboundProvider is a provider for srv over pkg/outbound's client, whose
// transport wrap may instrument.
func outboundProvider(t *testing.T, srv *httptest.Server, wrap func(http.RoundTripper) http.RoundTripper) *openai.Provider {
	t.Helper()
	addr := netip.MustParseAddrPort(srv.Listener.Addr().String())
	policy := outbound.Policy{AllowCIDRs: []netip.Prefix{netip.PrefixFrom(addr.Addr(), 32)}, ExtraPorts: []int{int(addr.Port())}}
	hc := outbound.NewClient(policy, outbound.Options{})
	hc.Transport = wrap(hc.Transport)
	p, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: "k", MaxRetries: -1, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCallsToAPlainHTTPModelServerShareOneConnection(t *testing.T) {
	ctx := context.Background()
	req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("Hello")}}
	calls := []struct {
		name string
		call func(*openai.Provider) error
	}{
		{"chat completions", func(p *openai.Provider) error { _, err := p.Complete(ctx, req); return err }},
		{"streamed chat completions", func(p *openai.Provider) error {
			_, err := p.Stream(ctx, req, func(llm.Delta) {})
			return err
		}},
		{"embeddings", func(p *openai.Provider) error { _, _, err := p.Embed(ctx, "m", []string{"Hello"}); return err }},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			p, conns := chunkedModelServer(t)
			for range 5 {
				if err := c.call(p); err != nil {
					t.Fatal(err)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Errorf("5 calls opened %d connections; want 1", n)
			}
		})
	}
}

// A stream Parley gives up on while the server goes on is not read to its
// end: Close returns, and the server sees the connection go.
func TestAnAbandonedStreamIsClosedWithoutWaitingForItsEnd(t *testing.T) {
	req := &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("Hello")}}
	cases := []struct {
		name string
		// then is what the server does after its first event.
		then func(w http.ResponseWriter, r *http.Request)
		// cancelOnDelta makes the user cancel at the first delta.
		cancelOnDelta bool
	}{
		{"the user cancels, the server falls silent", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}, true},
		{"an error event, then silence", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, errorEvent)
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}, false},
		{"an error event, then keep-alives without end", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, errorEvent)
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gone := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(gone)
				io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, chunkEvent)
				w.(http.Flusher).Flush()
				c.then(w, r)
			}))
			defer srv.Close()
			p := outboundProvider(t, srv, func(rt http.RoundTripper) http.RoundTripper { return rt })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			_, err := p.Stream(ctx, req, func(llm.Delta) {
				if c.cancelOnDelta {
					cancel()
				}
			})
			var e *llm.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v; want the stream to fail", err)
			}
			<-gone // the server saw the connection closed
		})
	}
}
