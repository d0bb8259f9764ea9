package httpretry_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/parleyhq/parley/pkg/httpretry"
)

// A client is shared by every dialog; one call that fails for good must
// not close the idle connections the others would reuse.
func TestAFailedCallLeavesTheSharedPoolAlone(t *testing.T) {
	var conns atomic.Int32
	healthy := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "ok")
	}))
	healthy.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	healthy.Start()
	defer healthy.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer failing.Close()

	shared := &http.Client{Transport: &http.Transport{}}
	retryOn503 := func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		return err != nil || resp.StatusCode == http.StatusServiceUnavailable, nil
	}
	rc := httpretry.New(shared, 1, time.Millisecond, time.Millisecond, retryOn503)
	get := func(url string) int {
		t.Helper()
		req, err := retryablehttp.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get(healthy.URL); got != http.StatusOK {
		t.Fatalf("healthy server answered %d", got)
	}
	if got := get(failing.URL); got != http.StatusServiceUnavailable {
		t.Fatalf("failing server answered %d; want its last 503", got)
	}
	if got := get(healthy.URL); got != http.StatusOK {
		t.Fatalf("healthy server answered %d", got)
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("the healthy server saw %d connections; want its idle one reused", n)
	}
}
