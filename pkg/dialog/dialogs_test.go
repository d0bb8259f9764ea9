package dialog_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store"
)

// keyPrincipal makes a key in the shop tenant and authenticates with it.
func (e *rtEnv) keyPrincipal(t *testing.T, in platform.APIKeyInput) *platform.Principal {
	t.Helper()
	k, err := e.svc.APIKeys().Create(ctx, e.admin, "shop", in)
	if err != nil {
		t.Fatal(err)
	}
	return platformtest.Authenticate(t, e.svc, k.Key)
}

// sessionAs signs in a new member of the shop tenant with role.
func (e *rtEnv) sessionAs(t *testing.T, role string) *platform.Principal {
	t.Helper()
	email := role + "@shop.test"
	if _, err := e.svc.Users().Create(ctx, platform.Operator(), email, "member-password"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Members().Add(ctx, platform.Operator(), "shop", email, role); err != nil {
		t.Fatal(err)
	}
	s, err := e.svc.Auth().Login(ctx, email, "member-password")
	if err != nil {
		t.Fatal(err)
	}
	return platformtest.Authenticate(t, e.svc, s.Token)
}

func TestCreateDialog(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		chat := e.keyPrincipal(t, platform.APIKeyInput{Name: "chat", Scopes: []string{"chat"}})
		widget := e.keyPrincipal(t, platform.APIKeyInput{Name: "w", Bot: "helper", Origins: []string{"https://shop.example"}})
		editor := e.sessionAs(t, "editor")
		if _, _, err := e.svc.Versions().Create(ctx, e.admin, "shop", "helper", []byte(shopConfig(e.shop.URL+"/v2"))); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.svc.Bots().Create(ctx, e.admin, "shop", "draft-only", []byte(configV1)); err != nil {
			t.Fatal(err)
		}
		gold := map[string]string{"tier": "gold"}
		cases := []struct {
			name     string
			p        *platform.Principal
			bot      string
			in       dialog.CreateDialogInput
			code     platform.Code
			pointers []string
			version  int
			preview  bool
			channel  string
		}{
			{"a chat key starts a dialog on the published version", chat, "helper",
				dialog.CreateDialogInput{Context: gold}, "", nil, 1, false, "api"},
			{"a widget key starts one from its origin", widget, "helper",
				dialog.CreateDialogInput{Context: gold, Origin: "https://shop.example"}, "", nil, 1, false, "widget"},
			{"a widget key from another origin is forbidden", widget, "helper",
				dialog.CreateDialogInput{Context: gold, Origin: "https://evil.example"}, platform.CodeForbidden, nil, 0, false, ""},
			{"an editor previews the draft version", editor, "helper",
				dialog.CreateDialogInput{Context: gold, Version: 2}, "", nil, 2, true, "admin"},
			{"a chat key may not pick a version", chat, "helper",
				dialog.CreateDialogInput{Context: gold, Version: 2}, platform.CodeForbidden, nil, 0, false, ""},
			{"a version that does not exist is not found", editor, "helper",
				dialog.CreateDialogInput{Context: gold, Version: 9}, platform.CodeNotFound, nil, 0, false, ""},
			{"unknown and missing context variables are each pointed at", chat, "helper",
				dialog.CreateDialogInput{Context: map[string]string{"tierr": "gold", "dialog_id": "x"}}, platform.CodeInvalid,
				[]string{"/context/dialog_id", "/context/tierr", "/context/tier"}, 0, false, ""},
			{"a bot with no published version is a conflict", chat, "draft-only",
				dialog.CreateDialogInput{}, platform.CodeConflict, nil, 0, false, ""},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				d, err := e.rt.Dialogs().Create(ctx, tc.p, "shop", tc.bot, tc.in)
				if tc.pointers != nil {
					wantInvalid(t, err, tc.pointers...)
					return
				}
				wantCode(t, err, tc.code)
				if tc.code != "" {
					return
				}
				if d.Version != tc.version || d.Preview != tc.preview || d.Channel != tc.channel || d.Status != dialog.DialogActive || d.Greeting != "Hello!" {
					t.Fatalf("dialog %+v", d)
				}
			})
		}
		t.Run("another tenant's caller cannot see or use the dialog", func(t *testing.T) {
			d := e.dialog(t)
			_, other := e.tenantWithKey(t, "other")
			_, err := e.rt.Dialogs().Get(ctx, other, "shop", d.ID, "")
			wantCode(t, err, platform.CodeNotFound)
			_, err = e.rt.Dialogs().Get(ctx, other, "other", d.ID, "")
			wantCode(t, err, platform.CodeNotFound)
			_, err = e.rt.SendMessage(ctx, other, "other", d.ID, dialog.SendInput{Text: "hi"}, nil)
			wantCode(t, err, platform.CodeNotFound)
			_, err = e.rt.Dialogs().Create(ctx, other, "shop", "helper", dialog.CreateDialogInput{Context: gold})
			wantCode(t, err, platform.CodeNotFound)
		})
		t.Run("a widget key reads its own bot's dialog but not another bot's", func(t *testing.T) {
			d, err := e.rt.Dialogs().Create(ctx, widget, "shop", "helper", dialog.CreateDialogInput{Context: gold, Origin: "https://shop.example"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.rt.Dialogs().Get(ctx, widget, "shop", d.ID, "https://shop.example"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := e.svc.Bots().Create(ctx, e.admin, "shop", "sales", []byte(configV1)); err != nil {
				t.Fatal(err)
			}
			if _, err := e.svc.Versions().Publish(ctx, e.admin, "shop", "sales", 1); err != nil {
				t.Fatal(err)
			}
			sales, err := e.rt.Dialogs().Create(ctx, chat, "shop", "sales", dialog.CreateDialogInput{})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.rt.Dialogs().Get(ctx, widget, "shop", sales.ID, "https://shop.example")
			wantCode(t, err, platform.CodeNotFound)
		})
	})
}

func TestListDialogs(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d1, d2 := e.dialog(t), e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "g", Name: "locate", Arguments: `{}`}}})
		if _, err := e.rt.SendMessage(ctx, e.admin, "shop", d2.ID, dialog.SendInput{Text: "where?"}, nil); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			f    dialog.DialogFilter
			want int
		}{
			{"all dialogs of the tenant", dialog.DialogFilter{}, 2},
			{"dialogs of one bot by slug", dialog.DialogFilter{Bot: "helper"}, 2},
			{"paused dialogs only", dialog.DialogFilter{Status: "paused"}, 1},
			{"active dialogs only", dialog.DialogFilter{Status: "active"}, 1},
		}
		for _, tc := range cases {
			t.Run("listing "+tc.name, func(t *testing.T) {
				ds, _, err := e.rt.Dialogs().List(ctx, e.admin, "shop", tc.f, platform.ListOptions{})
				if err != nil || len(ds) != tc.want {
					t.Fatalf("%d dialogs, %v", len(ds), err)
				}
			})
		}
		t.Run("an unknown status is invalid", func(t *testing.T) {
			_, _, err := e.rt.Dialogs().List(ctx, e.admin, "shop", dialog.DialogFilter{Status: "done"}, platform.ListOptions{})
			wantInvalid(t, err, "/status")
		})
		t.Run("a chat-only key may not list dialogs", func(t *testing.T) {
			chat := e.keyPrincipal(t, platform.APIKeyInput{Name: "chat", Scopes: []string{"chat"}})
			_, _, err := e.rt.Dialogs().List(ctx, chat, "shop", dialog.DialogFilter{}, platform.ListOptions{})
			wantCode(t, err, platform.CodeForbidden)
		})
		_ = d1
	})
}

func TestLeases(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		t.Run("a dialog another process is answering is a conflict, and the text is not stored", func(t *testing.T) {
			d := e.dialog(t)
			if ok, err := e.store.Tenant(e.tenant.ID).Leases().Acquire(ctx, d.ID, "other-process", e.clock.Now(), time.Minute); !ok || err != nil {
				t.Fatal(ok, err)
			}
			_, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "hi"}, nil)
			wantCode(t, err, platform.CodeConflict)
			if h := e.history(t, d.ID); len(h) != 0 {
				t.Fatalf("history %q", h)
			}
		})
		t.Run("after a crash the half reply is interrupted and the next message works", func(t *testing.T) {
			d := e.dialog(t)
			// What a server killed mid-stream leaves: the user message, a
			// streaming reply and its lease.
			if err := e.store.Tenant(e.tenant.ID).Messages().Append(ctx, &store.Message{TenantID: e.tenant.ID, DialogID: d.ID, Kind: "user", Role: "user",
				Content: `[{"type":"text","text":"first"}]`, Text: "first"}); err != nil {
				t.Fatal(err)
			}
			if err := e.store.Tenant(e.tenant.ID).Messages().Append(ctx, &store.Message{TenantID: e.tenant.ID, DialogID: d.ID, Kind: "assistant", Role: "assistant",
				Status: store.MessageStreaming}); err != nil {
				t.Fatal(err)
			}
			if ok, err := e.store.Tenant(e.tenant.ID).Leases().Acquire(ctx, d.ID, "dead-process", e.clock.Now(), time.Minute); !ok || err != nil {
				t.Fatal(ok, err)
			}
			if h := e.history(t, d.ID); h[1] != "assistant:streaming:" {
				t.Fatalf("while the lease lives the reply looks alive: %q", h)
			}
			e.clock.Advance(2 * time.Minute)
			if h := e.history(t, d.ID); h[1] != "assistant:interrupted:" {
				t.Fatalf("once the lease expired a reader sees the reply interrupted: %q", h)
			}
			e.llm.Enqueue(llmtest.ServerReply{Text: "Back again."})
			turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "second"}, nil)
			if err != nil || turn.Done.Text != "Back again." {
				t.Fatalf("turn %+v, %v", turn, err)
			}
			want := []string{"user:complete:first", "assistant:interrupted:", "user:complete:second", "assistant:complete:Back again."}
			if got := e.history(t, d.ID); len(got) != 4 || got[1] != want[1] || got[3] != want[3] {
				t.Fatalf("history %q, want %q", got, want)
			}
			roles := []string{}
			for _, m := range e.llm.LastRequest().Messages {
				roles = append(roles, m.Role)
			}
			if !slices.Equal(roles, []string{"system", "user", "user"}) {
				t.Fatalf("the model saw roles %v; the interrupted reply must not be sent", roles)
			}
		})
	})
}

func TestSteeringWhileAReplyIsGenerated(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		slow := llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{ID: "c1", Name: "check_stock", Arguments: `{"item":"tent"}`}},
			Fault: &llmtest.Fault{Latency: 300 * time.Millisecond}}
		e.llm.Enqueue(slow, llmtest.ServerReply{Text: "Tents are in stock, and yes, in green."})
		sink := &events{}
		done := make(chan dialog.Turn, 1)
		go func() {
			turn, err := e.rt.SendMessage(context.Background(), e.admin, "shop", d.ID, dialog.SendInput{Text: "any tents?"}, sink)
			if err != nil {
				t.Error(err)
			}
			done <- turn
		}()
		// Wait until the first request is inside the loop: its user
		// message is stored and the model is being asked.
		for len(e.llm.Requests()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		turn, err := e.rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "in green?"}, nil)
		if err != nil || !turn.Queued || len(turn.Messages) != 1 || turn.Messages[0].Status != store.MessageQueued {
			t.Fatalf("second request %+v, %v", turn, err)
		}
		first := <-done
		if first.Done == nil || first.Done.Text != "Tents are in stock, and yes, in green." {
			t.Fatalf("first turn %+v", first)
		}
		want := []string{"user:complete:any tents?", "assistant:complete:",
			"tool_result:complete:Not run: the user sent a new message before this call started.",
			"user:complete:in green?", "assistant:complete:Tents are in stock, and yes, in green."}
		if h := e.history(t, d.ID); !slices.Equal(h, want) {
			t.Fatalf("history\n got %q\nwant %q", h, want)
		}
		if n := len(e.shopSeen.all()); n != 0 {
			t.Fatalf("the steered-over tool ran %d times", n)
		}
	})
}

func TestARunKeepsItsLeaseAndStopsWhenItLosesIt(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		rt := e.runtime(t, dialog.Options{Provider: e.rtProvider(t), LeaseTTL: 30 * time.Millisecond})
		d := e.dialog(t)
		e.llm.Enqueue(llmtest.ServerReply{Text: "too late", Fault: &llmtest.Fault{Latency: 20 * time.Second}})
		done := make(chan dialog.Turn, 1)
		go func() {
			turn, _ := rt.SendMessage(context.Background(), e.admin, "shop", d.ID, dialog.SendInput{Text: "hi"}, nil)
			done <- turn
		}()
		for len(e.llm.Requests()) == 0 {
			time.Sleep(time.Millisecond)
		}
		// Far past the TTL in the service's clock: only renewal keeps the
		// lease alive now.
		e.clock.Advance(time.Hour)
		t.Run("the running loop renews its lease", func(t *testing.T) {
			deadline := time.Now().Add(10 * time.Second)
			for {
				l, err := e.store.Tenant(e.tenant.ID).Leases().Get(ctx, d.ID)
				if err == nil && l.ExpiresAt.After(e.clock.Now()) {
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("lease %+v never renewed, %v", l, err)
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
		t.Run("a lease taken over stops the run", func(t *testing.T) {
			if err := e.store.DB().Exec("UPDATE dialog_leases SET owner = 'thief'").Error; err != nil {
				t.Fatal(err)
			}
			turn := <-done
			if turn.Done == nil || turn.Done.StopReason != "error" || turn.Error == nil {
				t.Fatalf("turn %+v", turn)
			}
			if !strings.Contains(turn.Error.Code, "cancel") {
				t.Fatalf("error event %+v", *turn.Error)
			}
		})
	})
}
