package inbound_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/inbound"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

var ctx = context.Background()

// world is a real API server with channels over a real store, a scripted
// model, and fake Telegram and Slack API servers that follow the
// platforms' documented wire formats.
type world struct {
	st       *store.Store
	svc      *platform.Service
	clock    *platformtest.Clock
	admin    *platform.Principal
	adminKey string
	llm      *llmtest.Scripted
	inbound  *inbound.Service
	srv      *httptest.Server
	telegram *fakeTelegram
	slack    *fakeSlack
	reg      *prometheus.Registry
	logs     *redacttest.Logs
}

// openSQLite is a migrated SQLite store of t's own.
func openSQLite(t testing.TB) *store.Store { return storetest.OpenSQLite(t) }

// forEachStore runs fn on SQLite, and on PostgreSQL when configured.
func forEachStore(t *testing.T, fn func(t *testing.T, w *world)) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) { fn(t, newWorld(t, st)) })
}

// testRetrySchedule is the default schedule's eight steps, each 20 ms: a
// retried job is tried again at once rather than after a second.
var testRetrySchedule = []time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond,
	20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond}

func newWorld(t testing.TB, st *store.Store) *world {
	t.Helper()
	w := &world{st: st, llm: llmtest.NewScripted(), reg: prometheus.NewRegistry(), logs: &redacttest.Logs{}}
	w.svc, w.clock = platformtest.NewService(t, st)
	_, key, err := w.svc.Tenants().Create(ctx, platform.Operator(), platform.CreateTenantInput{Slug: "shop", Name: "Shop"})
	if err != nil {
		t.Fatal(err)
	}
	w.adminKey = key.Key
	w.admin = platformtest.Authenticate(t, w.svc, key.Key)
	platformtest.Bot(t, w.svc, w.admin, "shop", "helper")
	if _, err := w.svc.Versions().Publish(ctx, w.admin, "shop", "helper", 1); err != nil {
		t.Fatal(err)
	}
	w.telegram = newFakeTelegram(t)
	w.slack = newFakeSlack(t)
	log := slog.New(slog.NewJSONHandler(w.logs, nil))
	rt := dialogtest.New(t, dialog.Options{Service: w.svc, Store: st, Provider: w.llm, DefaultModel: "gpt-4o-mini", Metrics: w.reg})
	w.inbound, err = inbound.New(inbound.Options{Platform: w.svc, Runtime: rt, Store: st, Client: loopbackClient(t, w.telegram.srv, w.slack.srv),
		TelegramAPI: w.telegram.srv.URL, SlackAPI: w.slack.srv.URL, Logger: log, Metrics: w.reg, RetrySchedule: testRetrySchedule})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	go w.inbound.Run(runCtx)
	t.Cleanup(func() { stop(); _ = w.inbound.Shutdown(ctx) })
	h, err := api.New(api.Options{Platform: w.svc, Runtime: rt, Inbound: w.inbound, Logger: log, Metrics: w.reg})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = httptest.NewServer(h)
	t.Cleanup(w.srv.Close)
	t.Cleanup(func() { _ = rt.Shutdown(ctx) })
	return w
}

// loopbackClient is the outbound client as cmd/parley builds it, with a
// policy that lets it reach the fake platform servers on loopback.
func loopbackClient(t testing.TB, srvs ...*httptest.Server) *http.Client {
	t.Helper()
	var ports []int
	for _, s := range srvs {
		_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
		p, _ := strconv.Atoi(port)
		ports = append(ports, p)
	}
	policy, err := outbound.ParsePolicy([]string{"127.0.0.1/32"}, ports)
	if err != nil {
		t.Fatal(err)
	}
	return outbound.NewClient(policy, outbound.Options{MaxRedirects: -1})
}

// client is an API client with the tenant's admin key.
func (w *world) client() *apiclient.Client {
	return apiclient.New(w.srv.URL, w.adminKey).WithHTTPClient(w.srv.Client())
}

// secret stores a tenant secret.
func (w *world) secret(t *testing.T, name, value string) {
	t.Helper()
	if _, err := w.svc.Secrets().Put(ctx, w.admin, "shop", name, value); err != nil {
		t.Fatal(err)
	}
}

// settle waits for the background answers of every request made so far.
func (w *world) settle(t *testing.T) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := w.inbound.Idle(c); err != nil {
		t.Fatal(err)
	}
}

// post sends body to a channel's inbound route with header.
func (w *world) post(t testing.TB, channelID string, header http.Header, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, w.srv.URL+platform.InboundPath(channelID), strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, out
}

// dialogs returns the tenant's dialogs.
func (w *world) dialogs(t *testing.T) []store.Dialog {
	t.Helper()
	var rows []store.Dialog
	if err := w.st.DB().Order("id").Find(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

// userMessages counts the stored user messages.
func (w *world) userMessages(t *testing.T) int64 {
	t.Helper()
	var n int64
	if err := w.st.DB().Model(&store.Message{}).Where("kind = ?", "user").Count(&n).Error; err != nil {
		t.Fatal(err)
	}
	return n
}

// npmModules finds the node_modules an install script put under .ci/dir
// with pkg in it, or skips t saying which script installs it.
func npmModules(t *testing.T, dir, pkg, script string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: skipping a test against " + pkg + " from npm")
	}
	wd, _ := os.Getwd()
	for {
		mods := filepath.Join(wd, ".ci", dir, "node_modules")
		if _, err := os.Stat(filepath.Join(mods, pkg, "package.json")); err == nil {
			return mods
		}
		if _, err := os.Stat(filepath.Join(wd, "go.mod")); err == nil {
			break
		}
		wd = filepath.Dir(wd)
	}
	t.Skip(pkg + " from npm is not installed: run " + script)
	return ""
}

// node runs a testdata script once, writes one JSON line per input and
// returns its output lines, one per input.
func node(t *testing.T, modules, script string, inputs ...any) []string {
	t.Helper()
	var in strings.Builder
	for _, v := range inputs {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
		in.WriteByte('\n')
	}
	cmd := exec.Command("node", filepath.Join("testdata", script))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stdin = strings.NewReader(in.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v", script, err)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != len(inputs) {
		t.Fatalf("node %s answered %d lines for %d inputs", script, len(lines), len(inputs))
	}
	return lines
}

// scrape returns the server's /metrics page.
func scrape(t *testing.T, w *world) string {
	t.Helper()
	resp, err := w.srv.Client().Get(w.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
