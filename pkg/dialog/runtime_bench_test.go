package dialog_test

import (
	"context"
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// BenchmarkSendMessage is one user message answered in text, end to end
// on SQLite: authorisation, storing the message, the lease, loading the
// history, the model call over HTTP to the fake server, storing the reply,
// metering and saving the state. It is what the platform adds around a
// model call. Every iteration uses a fresh dialog, so history stays short.
func BenchmarkSendMessage(b *testing.B) {
	rt := benchRuntime(b, storetest.OpenSQLite(b))
	ctx, op := context.Background(), platform.Operator()
	b.ReportAllocs()
	for b.Loop() {
		d, err := rt.Dialogs().Create(ctx, op, "bench", "bot", dialog.CreateDialogInput{})
		if err != nil {
			b.Fatal(err)
		}
		turn, err := rt.SendMessage(ctx, op, "bench", d.ID, dialog.SendInput{Text: "How are you?"}, nil)
		if err != nil || turn.Done == nil || turn.Done.Text != "Fine, thanks." {
			b.Fatalf("turn %+v, %v", turn, err)
		}
	}
}
