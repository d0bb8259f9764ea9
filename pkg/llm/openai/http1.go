package openai

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"time"
)

// Limits of the plain-HTTP connection pool. Idle connections are closed
// after 90 s, as net/http's default transport does. Up to 100 per server
// wait for reuse: a plain-HTTP model server is usually one nearby host
// that every dialog calls at once, and here an idle connection costs no
// goroutine, only its socket and read buffer.
const (
	idleConnTimeout     = 90 * time.Second
	maxIdleConnsPerHost = 100
)

// maxResponseHeaderBytes bounds a response's status line and headers, as
// net/http's Transport does by default, so a broken server cannot make a
// call buffer without end.
const maxResponseHeaderBytes = 10 << 20

// http1Transport is the default transport for plain-HTTP model servers
// (Ollama, vLLM, llama.cpp on the same host or network). net/http's
// Transport gives each HTTP/1.1 connection a reading and a writing goroutine
// for its whole life. A model may keep a call waiting minutes for its first
// byte, and every open event stream waits on a call of its own, so those
// two goroutines were a quarter of an idle stream's memory. This transport
// writes the request and reads the response in the caller's goroutine; a
// waiting call costs its socket and a connReadBuffer, nothing more.
//
// HTTPS, and requests the environment sends through a proxy, go to next:
// over HTTPS the server speaks HTTP/2, where calls share connections anyway.
type http1Transport struct {
	next  http.RoundTripper
	proxy func(*http.Request) (*url.URL, error) // nil: never a proxy
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)

	mu   sync.Mutex
	idle map[string][]*http1Conn // by host:port, the most recently used last
}

// newHTTP1Transport serves plain HTTP itself and the rest through next,
// dialing and choosing proxies as next does.
func newHTTP1Transport(next *http.Transport) *http1Transport {
	t := &http1Transport{next: next, proxy: next.Proxy, dial: next.DialContext}
	if t.dial == nil {
		t.dial = (&net.Dialer{}).DialContext
	}
	return t
}

// RoundTrip sends req and returns once the response headers are in.
func (t *http1Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "http" || t.proxied(req) {
		return t.next.RoundTrip(req)
	}
	addr := hostPort(req.URL)
	for {
		c, reused, err := t.conn(req.Context(), addr)
		if err != nil {
			return nil, err
		}
		resp, unanswered, err := c.roundTrip(req)
		if err == nil {
			return resp, nil
		}
		// A reused connection that failed before any answer was most
		// likely closed by the server while it sat idle; net/http's
		// Transport notices that in its reading goroutine, this one when
		// it next uses the connection. The request goes out again on
		// another connection.
		if !reused || !unanswered {
			return nil, err
		}
		if req = rewound(req); req == nil {
			return nil, err
		}
	}
}

func (t *http1Transport) proxied(req *http.Request) bool {
	if t.proxy == nil {
		return false
	}
	p, err := t.proxy(req)
	return p != nil || err != nil // next reports the error
}

// CloseIdleConnections closes the connections waiting for reuse.
func (t *http1Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, conns := range idle {
		for _, c := range conns {
			c.idleTimer.Stop()
			c.nc.Close()
		}
	}
	if ci, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// conn returns an idle connection to addr, or dials one.
func (t *http1Transport) conn(ctx context.Context, addr string) (c *http1Conn, reused bool, err error) {
	t.mu.Lock()
	for conns := t.idle[addr]; len(conns) > 0; conns = t.idle[addr] {
		c = conns[len(conns)-1]
		conns[len(conns)-1] = nil
		t.idle[addr] = conns[:len(conns)-1]
		if c.idleTimer.Stop() {
			t.mu.Unlock()
			return c, true, nil
		}
		// Its idle time just ran out and expire is closing it.
	}
	t.mu.Unlock()
	nc, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	c = &http1Conn{t: t, addr: addr, nc: nc, lr: io.LimitedReader{R: nc}}
	c.br = bufio.NewReaderSize(&c.lr, connReadBuffer)
	return c, false, nil
}

// putIdle keeps c for reuse, or closes it when enough are kept.
func (t *http1Transport) putIdle(c *http1Conn) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.idle[c.addr]) >= maxIdleConnsPerHost {
		c.nc.Close()
		return
	}
	if t.idle == nil {
		t.idle = map[string][]*http1Conn{}
	}
	t.idle[c.addr] = append(t.idle[c.addr], c)
	if c.idleTimer == nil {
		c.idleTimer = time.AfterFunc(idleConnTimeout, c.expire)
	} else {
		c.idleTimer.Reset(idleConnTimeout)
	}
}

// http1Conn is one connection to a model server, used by one call at a
// time.
type http1Conn struct {
	t         *http1Transport
	addr      string
	nc        net.Conn
	lr        io.LimitedReader // nc, limited while headers are read
	br        *bufio.Reader    // reads lr
	idleTimer *time.Timer      // set once the connection was first idle
}

// expire closes c, idle for idleConnTimeout.
func (c *http1Conn) expire() {
	t := c.t
	t.mu.Lock()
	if i := slices.Index(t.idle[c.addr], c); i >= 0 {
		t.idle[c.addr] = slices.Delete(t.idle[c.addr], i, i+1)
	}
	t.mu.Unlock()
	c.nc.Close()
}

// roundTrip sends req on c and reads the response headers. unanswered
// reports a failure before the server sent anything back, which on a
// reused connection is worth another try. The connection is closed on
// failure; on success the response body hands it back.
func (c *http1Conn) roundTrip(req *http.Request) (resp *http.Response, unanswered bool, err error) {
	ctx := req.Context()
	// Closing the connection is what ends a cancelled call's wait, in
	// whichever read or write it is.
	stop := context.AfterFunc(ctx, func() { c.nc.Close() })
	fail := func(err error, unanswered bool) (*http.Response, bool, error) {
		stop()
		c.nc.Close()
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, unanswered, err
	}
	if err := req.Write(c.nc); err != nil {
		return fail(err, true)
	}
	// The first byte is awaited on its own so that a failure here is
	// known to have found no answer.
	c.lr.N = maxResponseHeaderBytes
	if _, err := c.br.Peek(1); err != nil {
		return fail(err, true)
	}
	resp, err = http.ReadResponse(c.br, req)
	for err == nil && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
		resp, err = http.ReadResponse(c.br, req) // informational; the answer follows
	}
	if c.lr.N <= 0 {
		return fail(fmt.Errorf("the response headers exceed %d bytes", maxResponseHeaderBytes), false)
	}
	if err != nil {
		return fail(err, false)
	}
	c.lr.N = math.MaxInt64 // the body is as long as the reply
	keep := !req.Close && !resp.Close
	if resp.Body == http.NoBody {
		c.release(stop, keep)
		return resp, false, nil
	}
	resp.Body = &http1Body{body: resp.Body, c: c, stop: stop, keep: keep}
	return resp, false, nil
}

// release hands c back for reuse once its exchange is over, unless the
// call was cancelled (which closed it), either side asked to close it, or
// the server sent more than its response.
func (c *http1Conn) release(stop func() bool, keep bool) {
	if stop() && keep && c.br.Buffered() == 0 {
		c.t.putIdle(c)
		return
	}
	c.nc.Close()
}

// http1Body is a response body that releases its connection when read to
// its end, and closes it when closed before: the rest of the reply is
// unread, so the connection cannot carry another.
type http1Body struct {
	body io.ReadCloser
	c    *http1Conn
	stop func() bool
	keep bool

	mu     sync.Mutex
	ended  bool // read to its end, or closed
	closed bool
}

func (b *http1Body) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, http.ErrBodyReadAfterClose
	}
	if b.ended {
		b.mu.Unlock()
		return 0, io.EOF
	}
	b.mu.Unlock()
	n, err := b.body.Read(p) // not under mu, so Close can end a blocked Read
	if err == io.EOF {
		b.mu.Lock()
		if !b.ended {
			b.ended = true
			b.c.release(b.stop, b.keep)
		}
		b.mu.Unlock()
	}
	return n, err
}

func (b *http1Body) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if !b.ended {
		b.ended = true
		b.stop()
		b.c.nc.Close()
	}
	return nil
}

// hostPort is u's host with the port HTTP uses when it names none.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// rewound is req with a fresh body for another attempt, or nil when its
// body cannot be read again.
func rewound(req *http.Request) *http.Request {
	if req.Body == nil || req.Body == http.NoBody {
		return req
	}
	if req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	again := *req
	again.Body = body
	return &again
}
