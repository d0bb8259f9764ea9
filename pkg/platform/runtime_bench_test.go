package platform_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// BenchmarkSendMessage is one user message answered in text, end to end
// on SQLite: authorisation, storing the message, the lease, loading the
// history, the model call over HTTP to the fake server, storing the reply,
// metering and saving the state. It is what the platform adds around a
// model call. Every iteration uses a fresh dialog, so history stays short.
func BenchmarkSendMessage(b *testing.B) {
	st := storetest.OpenSQLite(b)
	svc, err := platform.New(st, platform.Options{Sealer: mustSealer(b)})
	if err != nil {
		b.Fatal(err)
	}
	srv := llmtest.NewServer(b, llmtest.Options{Handler: func(*llmtest.ChatRequest) llmtest.ServerReply {
		return llmtest.ServerReply{Text: "Fine, thanks."}
	}})
	provider, err := openai.New(openai.Config{BaseURL: srv.URL(), MaxRetries: -1})
	if err != nil {
		b.Fatal(err)
	}
	rt, err := platform.NewRuntime(svc, platform.RuntimeOptions{Provider: provider, DefaultModel: "fake-model"})
	if err != nil {
		b.Fatal(err)
	}
	ctx, op := context.Background(), platform.Operator()
	if _, _, err := svc.CreateTenant(ctx, op, platform.CreateTenantInput{Slug: "bench", Name: "Bench"}); err != nil {
		b.Fatal(err)
	}
	if _, _, err := svc.CreateBot(ctx, op, "bench", "bot", []byte(configV1)); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Publish(ctx, op, "bench", "bot", 1); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		d, err := rt.CreateDialog(ctx, op, "bench", "bot", platform.CreateDialogInput{})
		if err != nil {
			b.Fatal(err)
		}
		turn, err := rt.SendMessage(ctx, op, "bench", d.ID, platform.SendInput{Text: "How are you?"}, nil)
		if err != nil || turn.Done == nil || turn.Done.Text != "Fine, thanks." {
			b.Fatalf("turn %+v, %v", turn, err)
		}
	}
}
