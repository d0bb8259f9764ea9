package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
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
