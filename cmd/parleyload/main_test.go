package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store/storetest"
	"github.com/parleyhq/parley/web"
)

// inProcess is a real API server over SQLite whose model is f, the way
// `parley serve` wires it, for driving the load code without a build.
func inProcess(t *testing.T, f *fakeLLM) *target {
	t.Helper()
	sealer, err := auth.NewSealer(bytes.Repeat([]byte{7}, auth.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	const token = "load-test-platform-token-0123456789"
	st := storetest.OpenSQLite(t)
	svc := platformtest.New(t, st, platform.Options{Sealer: sealer, PlatformToken: token})
	provider, err := openai.New(openai.Config{BaseURL: f.url, APIKey: "fake", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	rt := dialogtest.New(t, dialog.Options{Service: svc, Store: st, Provider: provider, DefaultModel: "fake-model", Metrics: reg})
	h, err := api.New(api.Options{Platform: svc, Runtime: rt, Logger: slog.New(slog.DiscardHandler), Metrics: reg, Web: web.Files()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		_ = rt.Shutdown(context.Background())
	})
	return &target{URL: srv.URL, Token: token, stop: func() {}}
}

func startTestFake(t *testing.T) *fakeLLM {
	t.Helper()
	f, err := startFake("127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.close)
	return f
}

func TestDriveAnswersEveryTurnInBothModes(t *testing.T) {
	f := startTestFake(t)
	s, err := newSession(context.Background(), inProcess(t, f), newHTTPClient(4))
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{modeJSON, modeSSE} {
		t.Run(mode+" with three dialogs at once", func(t *testing.T) {
			l := drive(context.Background(), s, driveOptions{Mode: mode, Concurrency: 3, Duration: 300 * time.Millisecond, TurnsPerDialog: 2})
			if l.Errors != 0 || l.Turns == 0 {
				t.Fatalf("%d turns, %d errors, first %q", l.Turns, l.Errors, l.FirstError)
			}
			if !(l.Turn.P50 > 0 && l.Turn.P50 <= l.Turn.P90 && l.Turn.P90 <= l.Turn.P99 && l.Turn.P99 <= l.Turn.Max) {
				t.Fatalf("percentiles out of order: %+v", l.Turn)
			}
		})
	}
}

func TestDriveCountsFailedTurnsAsErrors(t *testing.T) {
	f := startTestFake(t)
	tg := inProcess(t, f)
	s, err := newSession(context.Background(), tg, newHTTPClient(1))
	if err != nil {
		t.Fatal(err)
	}
	s.bot = "no-such-bot" // every dialog creation is a 404
	l := drive(context.Background(), s, driveOptions{Mode: modeJSON, Concurrency: 1, Duration: 100 * time.Millisecond, TurnsPerDialog: 1})
	if l.Turns != 0 || l.Errors == 0 || !strings.Contains(l.FirstError, "create dialog") {
		t.Fatalf("%d turns, %d errors, first %q", l.Turns, l.Errors, l.FirstError)
	}
}

func TestIdleStreamsStayOpenUntilReleasedAndAllEndDone(t *testing.T) {
	f := startTestFake(t)
	tg := inProcess(t, f)
	s, err := newSession(context.Background(), tg, newHTTPClient(8))
	if err != nil {
		t.Fatal(err)
	}
	m, err := idleStreams(context.Background(), s, f, tg.URL+"/metrics", 8)
	if err != nil {
		t.Fatal(err)
	}
	if m.Before.Goroutines == 0 || m.After.Goroutines <= m.Before.Goroutines {
		t.Fatalf("open streams added no goroutines: before %+v, after %+v", m.Before, m.After)
	}
	if f.heldCount() != 0 {
		t.Fatalf("%d model calls still held", f.heldCount())
	}
}

func TestProviderLatencyTimesRawCalls(t *testing.T) {
	f := startTestFake(t)
	l, err := providerLatency(context.Background(), f, 2, 200*time.Millisecond, 0)
	if err != nil {
		t.Fatal(err)
	}
	if l.P50 <= 0 || l.P99 < l.P50 {
		t.Fatalf("latency %+v", l)
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	cases := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"the median of 1..100 ms is 50 ms", hundred, 50, 50 * time.Millisecond},
		{"the 99th percentile of 1..100 ms is 99 ms", hundred, 99, 99 * time.Millisecond},
		{"the 100th percentile is the largest", hundred, 100, 100 * time.Millisecond},
		{"any percentile of one value is that value", []time.Duration{7}, 99, 7},
		{"the 50th of two values is the first", []time.Duration{1, 2}, 50, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := percentile(c.sorted, c.p); got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestParseConfigRefusesWhatCannotRun(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"a server without its token", []string{"-server", "http://x"}, "-token"},
		{"a database for a server it does not start", []string{"-server", "http://x", "-token", "t", "-database-url", "postgres://db"}, "-database-url"},
		{"a concurrency of zero", []string{"-concurrency", "1,0"}, "-concurrency"},
		{"an unknown mode", []string{"-modes", "json,grpc"}, "-modes"},
		{"dialogs without turns", []string{"-turns-per-dialog", "0"}, "-turns-per-dialog"},
		{"three servers on SQLite, whose data dir is one server's", []string{"-servers", "3"}, "-database-url"},
		{"servers started beside a running one", []string{"-server", "http://x", "-token", "t", "-servers", "2"}, "-servers"},
		{"a sweep level that is no number", []string{"-sweep", "1,ten"}, "-sweep"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseConfig(c.args, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v, want one naming %s", err, c.want)
			}
		})
	}
	t.Run("the defaults measure 1, 10 and 100 dialogs in both modes", func(t *testing.T) {
		c, err := parseConfig(nil, &bytes.Buffer{})
		if err != nil || len(c.Concurrency) != 3 || c.Concurrency[2] != 100 || len(c.Modes) != 2 || c.Streams != 1000 {
			t.Fatalf("%+v, %v", c, err)
		}
	})
}

func TestASweepComparesTheMostDialogsWithTen(t *testing.T) {
	c, err := parseConfig([]string{"-sweep", "1,10,50,200"}, &bytes.Buffer{})
	if err != nil || !c.Sweep || c.Streams != 0 || len(c.Concurrency) != 4 || c.Concurrency[3] != 200 {
		t.Fatalf("%+v, %v; want the four levels and no memory phase", c, err)
	}
	at := func(mode string, n int, perSec, p50, p99 float64) level {
		return level{Mode: mode, Concurrency: n, TurnsPerSec: perSec, Added: latency{P50: p50, P99: p99}}
	}
	got := sweepRatios([]level{at(modeJSON, 1, 400, 1, 2), at(modeJSON, 10, 1000, 2, 4), at(modeJSON, 200, 900, 20, 60),
		at(modeSSE, 1, 300, 1, 2), at(modeSSE, 50, 600, 3, 9)})
	want := []sweepRatio{{Mode: modeJSON, Base: 10, Top: 200, TurnsPerSec: 0.9, AddedP50: 10, AddedP99: 15},
		{Mode: modeSSE, Base: 1, Top: 50, TurnsPerSec: 2, AddedP50: 3, AddedP99: 4.5}}
	if len(got) != len(want) {
		t.Fatalf("%+v, want %+v", got, want)
	}
	for i := range want {
		g, w := got[i], want[i]
		near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
		if g.Mode != w.Mode || g.Base != w.Base || g.Top != w.Top || !near(g.TurnsPerSec, w.TurnsPerSec) || !near(g.AddedP50, w.AddedP50) || !near(g.AddedP99, w.AddedP99) {
			t.Fatalf("%+v, want %+v", g, w)
		}
	}
}

// TestDialogsGoToEveryServerInTurn drives three doors to one in-process
// server, as -servers 3 drives three servers, and counts the dialogs each
// door was asked to create and the messages it carried.
func TestDialogsGoToEveryServerInTurn(t *testing.T) {
	f := startTestFake(t)
	tg := inProcess(t, f)
	backend, err := url.Parse(tg.URL)
	if err != nil {
		t.Fatal(err)
	}
	var dialogs, messages [3]atomic.Int64
	doors := make([]string, 3)
	for i := range doors {
		proxy := httputil.NewSingleHostReverseProxy(backend)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/dialogs"):
				dialogs[i].Add(1)
			case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/messages"):
				messages[i].Add(1)
			}
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		doors[i] = srv.URL
	}
	three := &target{URL: doors[0], More: doors[1:], Token: tg.Token, stop: func() {}}
	s, err := newSession(context.Background(), three, newHTTPClient(4))
	if err != nil {
		t.Fatal(err)
	}
	l := drive(context.Background(), s, driveOptions{Mode: modeJSON, Concurrency: 3, Duration: 300 * time.Millisecond, TurnsPerDialog: 2})
	if l.Errors != 0 || l.Turns == 0 {
		t.Fatalf("%d turns, %d errors, first %q", l.Turns, l.Errors, l.FirstError)
	}
	var total int64
	for i := range doors {
		total += dialogs[i].Load()
	}
	for i := range doors {
		// Round robin: each door gets a third of the dialogs, give or take
		// the one being created when the run ended, and their messages.
		if d := dialogs[i].Load(); d < total/3-1 || d > total/3+1 || messages[i].Load() < d {
			t.Fatalf("door %d created %d of %d dialogs and carried %d messages; want a third of them each", i, d, total, messages[i].Load())
		}
	}
}

func TestATLSFakeAnswersModelCallsOverHTTP2(t *testing.T) {
	cert, err := newFakeCert(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f, err := startFake("127.0.0.1:0", cert)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.close)
	if !strings.HasPrefix(f.url, "https://") {
		t.Fatalf("fake URL %s; want https", f.url)
	}
	l, err := providerLatency(context.Background(), f, 2, 200*time.Millisecond, 0)
	if err != nil || l.P50 <= 0 {
		t.Fatalf("raw calls over TLS: %+v, %v", l, err)
	}
	resp, err := f.httpClient(1).Get(f.url + "/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Fatalf("the fake answered over %s; want HTTP/2", resp.Proto)
	}
	if _, err := http.Get(f.url + "/models"); err == nil {
		t.Fatalf("a client that does not trust the fake's certificate reached it")
	}
}
