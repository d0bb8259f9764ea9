package dialog_test

import (
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/webhook"
)

func TestFeedbackWritesFeedbackCreated(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		if _, err := e.svc.Webhooks().Create(ctx, e.admin, "shop", platform.WebhookInput{URL: "https://hooks.example.com/",
			Events: []string{webhook.FeedbackCreated}}); err != nil {
			t.Fatal(err)
		}
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{Text: "Hello there."})
		turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "hi"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		reply := turn.Messages[len(turn.Messages)-1].ID
		for _, rating := range []string{dialog.FeedbackDown, dialog.FeedbackUp} {
			if _, err := e.rt.Dialogs().PutFeedback(ctx, e.admin, "shop", d.ID, reply, "", dialog.FeedbackInput{Rating: rating, Comment: "ok"}); err != nil {
				t.Fatal(err)
			}
		}
		got := platformtest.OutboxData(t, e.store, webhook.FeedbackCreated)
		if len(got) != 2 || got[0]["rating"] != "down" || got[1]["rating"] != "up" || got[1]["message_id"] != reply || got[1]["dialog_id"] != d.ID {
			t.Fatalf("feedback.created data %v", got)
		}
	})
}
