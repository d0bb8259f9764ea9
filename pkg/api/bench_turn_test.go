package api_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/auth"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// BenchmarkPostMessage is one message answered over HTTP through the real
// handler (authentication with an sk_ key, logging at info level, metrics)
// and the fake LLM at 0 ms, as JSON and as an event stream, by 1 and 10
// dialogs at once, on SQLite and (with PARLEY_TEST_DATABASE_URL)
// PostgreSQL. Dialogs get ten messages each, then a new one starts.
//
//	go test -run '^$' -bench BenchmarkPostMessage -benchmem ./pkg/api
func BenchmarkPostMessage(b *testing.B) {
	type backend struct {
		name string
		open func(testing.TB) *store.Store
	}
	backends := []backend{{store.DialectSQLite, storetest.OpenSQLite}}
	if u := os.Getenv(storetest.EnvDatabaseURL); u != "" {
		backends = append(backends, backend{store.DialectPostgres, func(tb testing.TB) *store.Store { return storetest.OpenPostgres(tb, u) }})
	}
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			c := benchServer(b, be.open(b))
			for _, mode := range []string{"json", "sse"} {
				for _, dialogs := range []int{1, 10} {
					b.Run(fmt.Sprintf("%s/dialogs=%d", mode, dialogs), func(b *testing.B) {
						b.SetParallelism((dialogs + 1) / 2) // GOMAXPROCS is 2 on the reference machine
						b.ReportAllocs()
						b.RunParallel(func(pb *testing.PB) {
							ctx, dialog, n := context.Background(), "", 0
							for pb.Next() {
								if n%10 == 0 {
									d, err := c.CreateDialog(ctx, "bench", "bot", apiclient.CreateDialogRequest{})
									if err != nil {
										b.Error(err)
										return
									}
									dialog = d.ID
								}
								n++
								if err := benchSend(ctx, c, mode, dialog); err != nil {
									b.Error(err)
									return
								}
							}
						})
					})
				}
			}
		})
	}
}

func benchSend(ctx context.Context, c *apiclient.Client, mode, dialog string) error {
	if mode == "json" {
		turn, err := c.SendMessage(ctx, "bench", dialog, "Where is my order?")
		if err == nil && (turn.Done == nil || turn.Done.Text != "Fine, thanks.") {
			err = fmt.Errorf("turn ended without the reply: %+v", turn)
		}
		return err
	}
	var last apiclient.Event
	err := c.StreamMessage(ctx, "bench", dialog, "Where is my order?", "", func(e apiclient.Event) error { last = e; return nil })
	if err == nil && last.Type != "done" {
		err = fmt.Errorf("stream ended with %s: %s", last.Type, last.Data)
	}
	return err
}

// benchServer serves the real handler over st with a dialog runtime whose
// model is the fake LLM, and returns a client holding tenant bench's key;
// its bot "bot" is published.
func benchServer(b *testing.B, st *store.Store) *apiclient.Client {
	b.Helper()
	fake := llmtest.NewServer(b, llmtest.Options{Handler: func(*llmtest.ChatRequest) llmtest.ServerReply {
		return llmtest.ServerReply{Text: "Fine, thanks."}
	}})
	c, _, _ := botServer(b, st, fake.URL(), "bench")
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	return c.WithHTTPClient(&http.Client{Transport: tr})
}

// botServer is the API over st, logging at info level to nowhere, with
// its model at modelURL: a client holding the API key (also returned) of
// a new tenant with a published bot "bot", and the server's address.
func botServer(tb testing.TB, st *store.Store, modelURL, tenant string) (c *apiclient.Client, key, addr string) {
	tb.Helper()
	secrets := make([]byte, auth.KeySize)
	if _, err := rand.Read(secrets); err != nil {
		tb.Fatal(err)
	}
	sealer, err := auth.NewSealer(secrets)
	if err != nil {
		tb.Fatal(err)
	}
	svc := platformtest.New(tb, st, platform.Options{Sealer: sealer, PlatformToken: testPlatformToken})
	provider, err := openai.New(openai.Config{BaseURL: modelURL, APIKey: "fake", MaxRetries: -1})
	if err != nil {
		tb.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	rt := dialogtest.New(tb, dialog.Options{Service: svc, Store: st, Provider: provider, DefaultModel: "fake-model", Metrics: reg})
	h, err := api.New(api.Options{Platform: svc, Runtime: rt, Metrics: reg, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(h)
	tb.Cleanup(func() {
		_ = rt.Shutdown(context.Background()) // ends runs still waiting on the model, then their requests
		srv.CloseClientConnections()
		srv.Close()
	})
	c = apiclient.New(srv.URL, testPlatformToken)
	created, err := c.CreateTenant(context.Background(), apiclient.CreateTenantRequest{Slug: tenant, Name: tenant})
	if err != nil {
		tb.Fatal(err)
	}
	c = c.WithToken(created.APIKey.Key)
	if _, err := c.CreateBot(context.Background(), tenant, "bot", []byte(`{"basic_settings":{"name":"Support"}}`)); err != nil {
		tb.Fatal(err)
	}
	if _, err := c.Publish(context.Background(), tenant, "bot", 1); err != nil {
		tb.Fatal(err)
	}
	return c, created.APIKey.Key, srv.Listener.Addr().String()
}
