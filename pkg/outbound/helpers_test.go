package outbound

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// countingListener counts accepted connections, so a test can prove that a
// refused request never reached the server at all.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// server is a real HTTP server on a loopback address with a connection count.
type server struct {
	*httptest.Server
	listener *countingListener
}

func (s *server) port() int {
	return s.listener.Addr().(*net.TCPAddr).Port
}

func (s *server) accepted() int64 { return s.listener.accepted.Load() }

// startServer listens on addr ("127.0.0.1:0" or "[::1]:0").
func startServer(t *testing.T, addr string, h http.Handler) *server {
	t.Helper()
	if h == nil {
		h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("reached")) })
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	cl := &countingListener{Listener: ln}
	s := httptest.NewUnstartedServer(h)
	s.Listener = cl
	s.Start()
	t.Cleanup(s.Close)
	return &server{Server: s, listener: cl}
}

// fakeResolver answers from a fixed table and can change its answer per
// lookup (answers[name][i] is the i-th answer, the last one repeats).
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][][]netip.Addr
	lookups map[string]int
}

func newFakeResolver(table map[string][]string) *fakeResolver {
	r := &fakeResolver{answers: map[string][][]netip.Addr{}, lookups: map[string]int{}}
	for name, addrs := range table {
		r.add(name, addrs...)
	}
	return r
}

// add appends one answer for name; a second add makes the next lookup differ.
func (r *fakeResolver) add(name string, addrs ...string) {
	answer := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		answer[i] = netip.MustParseAddr(a)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers[name] = append(r.answers[name], answer)
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	answers, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.lookups[host], len(answers)-1)
	r.lookups[host]++
	return answers[i], nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups[host]
}

func itoa(n int) string { return strconv.Itoa(n) }

func writeFile(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o600)
}
