package dialog_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/webhook"
)

func TestDialogFactsWriteTheirWebhookEvents(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		if _, err := e.svc.Webhooks().Create(ctx, e.admin, "shop", platform.WebhookInput{URL: "https://hooks.example.com/",
			Events: []string{webhook.DialogCreated, webhook.ToolFailed}}); err != nil {
			t.Fatal(err)
		}
		d := e.dialog(t)
		e.llm.Enqueue(
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "lookup_order", Arguments: `{}`}}},
			llmtest.ServerReply{Text: "Which order?"},
		)
		if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "where is my order"}, nil); err != nil {
			t.Fatal(err)
		}
		t.Run("creating a dialog writes dialog.created", func(t *testing.T) {
			got := platformtest.OutboxData(t, e.store, webhook.DialogCreated)
			if len(got) != 1 || got[0]["bot"] != "helper" || got[0]["dialog"].(map[string]any)["id"] != d.ID {
				t.Fatalf("dialog.created data %v", got)
			}
		})
		t.Run("a tool call that fails writes tool.failed", func(t *testing.T) {
			got := platformtest.OutboxData(t, e.store, webhook.ToolFailed)
			if len(got) != 1 || got[0]["tool"] != "lookup_order" || got[0]["dialog_id"] != d.ID || got[0]["error"] == "" {
				t.Fatalf("tool.failed data %v", got)
			}
		})
	})
}

func TestEveryMessageOfADialogWritesMessageCreated(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		if _, err := e.svc.Webhooks().Create(ctx, e.admin, "shop", platform.WebhookInput{URL: "https://hooks.example.com/",
			Events: []string{webhook.MessageCreated, webhook.DialogHandoffRequested}}); err != nil {
			t.Fatal(err)
		}
		d := e.dialog(t)
		e.llm.Enqueue(
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "lookup_order", Arguments: `{"order":"A7"}`}}},
			llmtest.ServerReply{Text: "Order A7 shipped."},
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "h1", Name: "handoff_to_human", Arguments: `{"reason":"asked"}`}}},
		)
		for _, text := range []string{"where is A7?", "a human please", "hello? anyone?"} {
			if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: text}, nil); err != nil {
				t.Fatal(err)
			}
		}
		got := platformtest.OutboxData(t, e.store, webhook.MessageCreated)
		var said []string
		for _, data := range got {
			m := data["message"].(map[string]any)
			if data["dialog_id"] != d.ID {
				t.Fatalf("message.created of another dialog: %v", data)
			}
			said = append(said, m["role"].(string)+":"+m["text"].(string))
		}
		want := []string{"user:where is A7?", "assistant:", "assistant:Order A7 shipped.", "user:a human please", "assistant:",
			"user:hello? anyone?"}
		if strings.Join(said, "|") != strings.Join(want, "|") {
			t.Fatalf("message.created in order:\n got %q\nwant %q", said, want)
		}
		if h := platformtest.OutboxData(t, e.store, webhook.DialogHandoffRequested); len(h) != 1 || h[0]["dialog_id"] != d.ID || h[0]["reason"] != "asked" {
			t.Fatalf("dialog.handoff_requested: %v", h)
		}
		var announcedRows []string
		for _, h := range e.history(t, d.ID) {
			if strings.HasPrefix(h, "user:") || strings.HasPrefix(h, "assistant:") {
				announcedRows = append(announcedRows, h)
			}
		}
		if len(announcedRows) != len(want) {
			t.Fatalf("%d user and assistant rows stored, %d announced: %q", len(announcedRows), len(want), announcedRows)
		}
	})
}

func TestTheHumanSideOfAHandoffWritesItsWebhookEvents(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		if _, err := e.svc.Webhooks().Create(ctx, e.admin, "shop", platform.WebhookInput{URL: "https://hooks.example.com/",
			Events: []string{webhook.MessageCreated, webhook.DialogHandoffTaken, webhook.DialogHandoffReleased, webhook.DialogClosed}}); err != nil {
			t.Fatal(err)
		}
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "h1", Name: "handoff_to_human", Arguments: `{"reason":"asked"}`}}})
		if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "a human please"}, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rt.Handoffs().Assign(ctx, e.admin, "shop", d.ID, "Ada"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rt.Handoffs().Post(ctx, e.admin, "shop", d.ID, "Ada here, how can I help?"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rt.Handoffs().Release(ctx, e.admin, "shop", d.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rt.Dialogs().Close(ctx, e.admin, "shop", d.ID, "resolved by Ada"); err != nil {
			t.Fatal(err)
		}
		t.Run("taking and releasing write dialog.handoff_taken and dialog.handoff_released naming the operator", func(t *testing.T) {
			taken, released := platformtest.OutboxData(t, e.store, webhook.DialogHandoffTaken), platformtest.OutboxData(t, e.store, webhook.DialogHandoffReleased)
			if len(taken) != 1 || taken[0]["operator"] != "Ada" || taken[0]["dialog_id"] != d.ID {
				t.Fatalf("dialog.handoff_taken %v", taken)
			}
			if len(released) != 1 || released[0]["operator"] != "Ada" {
				t.Fatalf("dialog.handoff_released %v", released)
			}
		})
		t.Run("the operator's reply is a message.created with role operator", func(t *testing.T) {
			var ops []map[string]any
			for _, data := range platformtest.OutboxData(t, e.store, webhook.MessageCreated) {
				if m := data["message"].(map[string]any); m["role"] == "operator" {
					ops = append(ops, m)
				}
			}
			if len(ops) != 1 || ops[0]["text"] != "Ada here, how can I help?" || ops[0]["kind"] != "operator" {
				t.Fatalf("operator messages announced: %v", ops)
			}
		})
		t.Run("closing writes dialog.closed with the reason, who closed it and the outcome", func(t *testing.T) {
			closed := platformtest.OutboxData(t, e.store, webhook.DialogClosed)
			if len(closed) != 1 || closed[0]["reason"] != "resolved by Ada" || closed[0]["closed_by"] != "person" {
				t.Fatalf("dialog.closed %v", closed)
			}
			// Released back to the bot, it was handed off all the same.
			if closed[0]["outcome"] != "handed_off" || closed[0]["rating"] != float64(0) {
				t.Fatalf("dialog.closed outcome %v, rating %v", closed[0]["outcome"], closed[0]["rating"])
			}
		})
	})
}
