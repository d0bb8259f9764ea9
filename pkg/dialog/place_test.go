package dialog_test

import (
	"slices"
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/store"
)

// TestUserTextPlacement checks where the request's own text ends up now
// that an active dialog stores it complete up front instead of queued: in
// the order the model saw it, once, whatever the loop writes first.
func TestUserTextPlacement(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		cases := []struct {
			name string
			// before writes what earlier runs left in the dialog.
			before func(t *testing.T, d dialog.Dialog)
			want   []string
		}{{
			name:   "a fresh dialog stores the text once, before the reply",
			before: func(*testing.T, dialog.Dialog) {},
			want:   []string{"user:complete:hello", "assistant:complete:Hi there."},
		}, {
			name: "after a run died mid-tool the text follows the results the loop records for the open call",
			before: func(t *testing.T, d dialog.Dialog) {
				rows := []*store.Message{
					{Kind: "user", Role: "user", Content: `[{"type":"text","text":"where is 7?"}]`, Text: "where is 7?"},
					{Kind: "assistant", Role: "assistant", Content: `[{"type":"tool_use","tool_use":{"id":"c1","name":"lookup_order","arguments":{"order":"7"}}}]`},
				}
				for _, m := range rows {
					m.TenantID, m.DialogID = e.tenant.ID, d.ID
					if err := e.store.Tenant(m.TenantID).Messages().Append(ctx, m); err != nil {
						t.Fatal(err)
					}
				}
			},
			want: []string{"user:complete:where is 7?", "assistant:complete:", "tool_result:complete:*",
				"user:complete:hello", "assistant:complete:Hi there."},
		}}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d := e.dialog(t)
				tc.before(t, d)
				e.llm.Enqueue(llmtest.ServerReply{Text: "Hi there."})
				turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "hello"}, nil)
				if err != nil || turn.Done == nil {
					t.Fatalf("turn %+v, %v", turn, err)
				}
				got := e.history(t, d.ID)
				for i, w := range tc.want {
					if i < len(got) && w == "tool_result:complete:*" && len(got[i]) > len(w)-1 && got[i][:len(w)-1] == w[:len(w)-1] {
						got[i] = w
					}
				}
				if !slices.Equal(got, tc.want) {
					t.Fatalf("history %q, want %q", got, tc.want)
				}
				var users []string
				for _, m := range turn.Messages {
					if m.Kind == "user" {
						users = append(users, m.Status+":"+m.Text)
					}
				}
				if !slices.Equal(users, []string{"complete:hello"}) {
					t.Fatalf("the turn lists the user's text as %q", users)
				}
			})
		}
	})
}
