package openai

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
)

// countingServer is a plain-HTTP server that counts the connections it
// accepts and the requests it reads.
type countingServer struct {
	*httptest.Server
	conns, requests atomic.Int32
}

func newCountingServer(t *testing.T, h http.HandlerFunc) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		h(w, r)
	}))
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	t.Cleanup(s.Close)
	return s
}

// newTestHTTP1Transport is the default transport as newRetryClient builds it.
func newTestHTTP1Transport() *http1Transport {
	return newRetryClient(withDefaults(Config{})).HTTPClient.Transport.(*http1Transport)
}

// post sends body to url through rt and returns the response's body.
func post(t *testing.T, ctx context.Context, rt http.RoundTripper, url, body string) (string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	return string(got), err
}

func echo(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	w.Write(b)
}

// The point of the transport: a call waiting on a slow model over plain
// HTTP holds no goroutine but its caller's.
func TestAWaitingCallHoldsNoGoroutineOfItsConnection(t *testing.T) {
	const calls = 3
	arrived := make(chan struct{}, calls)
	release := make(chan struct{})
	s := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, `{"error":{"message":"no"}}`, http.StatusBadRequest)
	})
	p, err := New(Config{BaseURL: s.URL, APIKey: "k", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			p.Stream(context.Background(), &llm.Request{Model: "m", Messages: []llm.Message{llm.UserText("hi")}}, nil)
		})
	}
	for range calls {
		<-arrived
	}
	buf := make([]byte, 1<<20)
	stacks := string(buf[:runtime.Stack(buf, true)])
	close(release)
	wg.Wait()
	if n := strings.Count(stacks, "net/http.(*persistConn)"); n > 0 {
		t.Fatalf("%d goroutines of net/http's client connections run while %d calls wait; want none", n, calls)
	}
	if got := strings.Count(stacks, "(*http1Conn).roundTrip"); got != calls {
		t.Fatalf("%d calls wait in the plain-HTTP transport; want %d", got, calls)
	}
}

func TestConnectionsAreReusedOneCallAfterAnother(t *testing.T) {
	s := newCountingServer(t, echo)
	rt := newTestHTTP1Transport()
	for _, body := range []string{"one", "two", "three"} {
		if got, err := post(t, context.Background(), rt, s.URL, body); err != nil || got != body {
			t.Fatalf("post %q = %q, %v", body, got, err)
		}
	}
	if n := s.conns.Load(); n != 1 {
		t.Fatalf("three calls in a row opened %d connections; want 1", n)
	}
}

func TestACallOnAConnectionClosedWhileIdleGoesOutAgainOnANewOne(t *testing.T) {
	s := newCountingServer(t, echo)
	rt := newTestHTTP1Transport()
	if _, err := post(t, context.Background(), rt, s.URL, "first"); err != nil {
		t.Fatal(err)
	}
	s.CloseClientConnections() // as a server's keep-alive timeout does
	got, err := post(t, context.Background(), rt, s.URL, "second")
	if err != nil || got != "second" {
		t.Fatalf("the call after the server closed the idle connection = %q, %v; want its echo", got, err)
	}
	if n := s.requests.Load(); n != 2 {
		t.Fatalf("the server read %d requests; want 2", n)
	}
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("%d connections; want 2", n)
	}
}

func TestCancellingAWaitingCallClosesItsConnection(t *testing.T) {
	gone := make(chan struct{})
	s := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)   // then net/http watches the connection
		<-r.Context().Done() // and sees it close
		close(gone)
	})
	rt := newTestHTTP1Transport()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if _, err := post(t, ctx, rt, s.URL, "wait"); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call returned %v; want context.Canceled", err)
	}
	<-gone
}

func TestABodyClosedBeforeItsEndClosesItsConnection(t *testing.T) {
	// The request's own body says which call is cut short. Deciding by
	// arrival order raced: the first handler flushes its part before it
	// could mark itself first, so the second call's handler, run on
	// another connection as soon as the client closed the first body,
	// could take that mark and then wait forever.
	const cut = "cut"
	s := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		io.WriteString(w, "data: part\n\n")
		w.(http.Flusher).Flush()
		if string(b) == cut {
			<-r.Context().Done() // the rest of a long reply never comes
		}
	})
	rt := newTestHTTP1Transport()
	req, _ := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(cut))
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close() // returns at once: the unread rest is not waited for
	if _, err := resp.Body.Read(buf); !errors.Is(err, http.ErrBodyReadAfterClose) {
		t.Fatalf("Read after Close = %v; want ErrBodyReadAfterClose", err)
	}
	if _, err := post(t, context.Background(), rt, s.URL, "again"); err != nil {
		t.Fatal(err)
	}
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("%d connections; want 2, the cut one not reused", n)
	}
}

// recordingTransport stands in for net/http's Transport.
type recordingTransport struct{ calls atomic.Int32 }

func (r *recordingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	r.calls.Add(1)
	return nil, errors.New("recorded")
}

func TestHTTPSAndProxiedCallsGoToNetHTTP(t *testing.T) {
	proxy, _ := url.Parse("http://proxy.internal:3128")
	tests := []struct {
		name  string
		url   string
		proxy func(*http.Request) (*url.URL, error)
	}{
		{"HTTPS, for HTTP/2", "https://api.openai.com/v1/chat/completions", nil},
		{"plain HTTP through a proxy", "http://models.internal/v1/chat/completions", http.ProxyURL(proxy)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next := &recordingTransport{}
			rt := &http1Transport{next: next, proxy: tt.proxy}
			post(t, context.Background(), rt, tt.url, "x")
			if n := next.calls.Load(); n != 1 {
				t.Fatalf("net/http got %d calls; want 1", n)
			}
		})
	}
}

func TestResponseHeadersBeyondTheLimitAreRefused(t *testing.T) {
	s := newCountingServer(t, func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("X-Padding", strings.Repeat("x", maxResponseHeaderBytes))
	})
	_, err := post(t, context.Background(), newTestHTTP1Transport(), s.URL, "x")
	if err == nil || !strings.Contains(err.Error(), "exceed") {
		t.Fatalf("a response with %d bytes of headers returned %v; want a refusal", maxResponseHeaderBytes, err)
	}
}

func TestAConnectionIdleTooLongIsClosedAndNotReused(t *testing.T) {
	s := newCountingServer(t, echo)
	rt := newTestHTTP1Transport()
	if _, err := post(t, context.Background(), rt, s.URL, "first"); err != nil {
		t.Fatal(err)
	}
	rt.mu.Lock()
	idle := rt.idle[hostPort(mustParse(t, s.URL))]
	rt.mu.Unlock()
	if len(idle) != 1 {
		t.Fatalf("%d idle connections after a call; want 1", len(idle))
	}
	idle[0].idleTimer.Stop()
	idle[0].expire() // what its timer does after idleConnTimeout
	if got, err := post(t, context.Background(), rt, s.URL, "second"); err != nil || got != "second" {
		t.Fatalf("post = %q, %v", got, err)
	}
	if n := s.conns.Load(); n != 2 {
		t.Fatalf("%d connections; want 2, the expired one not reused", n)
	}
	if n := s.requests.Load(); n != 2 {
		t.Fatalf("the server read %d requests; want 2, none sent on the closed connection", n)
	}
}

func mustParse(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
