package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
)

// holdPrefix starts a user message whose model reply waits for
// fakeLLM.release: the way to keep an event stream open and idle.
const holdPrefix = "[hold] "

// replyText is every answer of the fake: short, like a real first token
// burst, so the cost measured is Parley's and not JSON volume.
const replyText = "Fine, thanks. How can I help you today?"

// fakeLLM serves the strict fake OpenAI-compatible API at 0 ms latency on
// a loopback port.
type fakeLLM struct {
	srv  *http.Server
	url  string
	cert *fakeCert // nil serves plain HTTP/1.1

	mu      sync.Mutex
	held    int
	release chan struct{}
}

// startFake listens on addr ("127.0.0.1:0" picks a free port); with a
// certificate it serves HTTPS, with HTTP/2.
func startFake(addr string, cert *fakeCert) (*fakeLLM, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("fake LLM: listen on %s: %w", addr, err)
	}
	f := &fakeLLM{url: "http://" + ln.Addr().String() + "/v1", cert: cert, release: make(chan struct{})}
	h := llmtest.NewHandler(llmtest.Options{FragmentSize: 16, Handler: f.answer, Unrecorded: true})
	f.srv = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if cert == nil {
		go func() { _ = f.srv.Serve(ln) }()
		return f, nil
	}
	f.url = "https://" + ln.Addr().String() + "/v1"
	f.srv.TLSConfig = cert.serverConfig()
	go func() { _ = f.srv.ServeTLS(ln, "", "") }()
	return f, nil
}

// httpClient is a client for n concurrent calls that trusts the fake.
func (f *fakeLLM) httpClient(n int) *http.Client {
	hc := newHTTPClient(n)
	if f.cert != nil {
		f.cert.trust(hc)
	}
	return hc
}

// certFile is the PEM file a server must trust to reach the fake, or "".
func (f *fakeLLM) certFile() string {
	if f.cert == nil {
		return ""
	}
	return f.cert.File
}

// answer replies at once, except to held messages, which wait for
// releaseHeld.
func (f *fakeLLM) answer(req *llmtest.ChatRequest) llmtest.ServerReply {
	if strings.HasPrefix(req.LastUserText(), holdPrefix) {
		f.mu.Lock()
		f.held++
		ch := f.release
		f.mu.Unlock()
		<-ch
		f.mu.Lock()
		f.held--
		f.mu.Unlock()
	}
	return llmtest.ServerReply{Text: replyText, Usage: &llm.Usage{InputTokens: 120, OutputTokens: 10}}
}

// heldCount says how many model calls are being held.
func (f *fakeLLM) heldCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held
}

// releaseHeld answers every held call.
func (f *fakeLLM) releaseHeld() {
	f.mu.Lock()
	defer f.mu.Unlock()
	close(f.release)
	f.release = make(chan struct{})
}

// waitHeld waits until n calls are held or ctx ends.
func (f *fakeLLM) waitHeld(ctx context.Context, n int) error {
	for f.heldCount() < n {
		select {
		case <-ctx.Done():
			return fmt.Errorf("fake LLM: %d of %d model calls arrived: %w", f.heldCount(), n, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// close releases held calls and stops the server.
func (f *fakeLLM) close() {
	f.releaseHeld()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		_ = f.srv.Close()
	}
}
