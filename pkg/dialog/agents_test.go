package dialog_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/webhook"
)

// A sub-run is the called bot's dialog in every way that matters to the
// tenant: its tools get the caller's end user, context and the tenant's
// secrets, and its messages write message.created, marked with the
// calling dialog.
func TestASubRunWorksWithTheCallersContextAndAnnouncesItsMessages(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		if _, err := e.svc.Webhooks().Create(ctx, e.admin, "shop", platform.WebhookInput{URL: "https://hooks.example.com/",
			Events: []string{webhook.MessageCreated}}); err != nil {
			t.Fatal(err)
		}
		front := `{"basic_settings": {"name": "Front desk"}, "context_variables": [{"name": "tier"}], "agents": [{"bot": "helper", "name": "ask_helper"}], "llm": {"model": "gpt-4o-mini"}}`
		if _, _, err := e.svc.Bots().Create(ctx, e.admin, "shop", "front", []byte(front)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(ctx, e.admin, "shop", "front", 1); err != nil {
			t.Fatal(err)
		}
		d, err := e.rt.Dialogs().Create(ctx, e.admin, "shop", "front", dialog.CreateDialogInput{UserID: "u1", Context: map[string]string{"tier": "gold"}})
		if err != nil {
			t.Fatal(err)
		}
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "ask_helper", Arguments: `{"input":"Where is order 7?"}`}}},
			llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "lookup_order", Arguments: `{"order":"7"}`}}},
			llmtest.ServerReply{Text: "Order 7 has shipped."},
			llmtest.ServerReply{Text: "Your order has shipped."})
		turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "where is my order 7?"}, nil)
		if err != nil || turn.Done == nil || turn.Done.Text != "Your order has shipped." {
			t.Fatalf("turn %+v %v", turn, err)
		}
		if got := e.shopSeen.all(); !slices.Contains(got, "GET /orders/7 auth=Bearer "+shopSecret+" tier=gold") {
			t.Fatalf("the shop saw %v; want the helper's lookup with the tenant's secret and the caller's tier", got)
		}
		subs, _, err := e.rt.Dialogs().List(ctx, e.admin, "shop", dialog.DialogFilter{Parent: d.ID}, platform.ListOptions{})
		if err != nil || len(subs) != 1 || subs[0].UserID != "u1" || subs[0].BotID != e.bot.ID {
			t.Fatalf("sub-runs %+v %v", subs, err)
		}
		var sub []string
		for _, data := range platformtest.OutboxData(t, e.store, webhook.MessageCreated) {
			if data["dialog_id"] == subs[0].ID {
				if data["parent_dialog_id"] != d.ID {
					t.Fatalf("a sub-run's message.created lacks its caller: %v", data)
				}
				sub = append(sub, data["message"].(map[string]any)["role"].(string))
			}
		}
		if got := strings.Join(sub, " "); got != "user assistant assistant" {
			t.Fatalf("the sub-run announced %q", got)
		}
	})
}
