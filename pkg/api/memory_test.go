package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

const memoryBot = `{"basic_settings": {"name": "Memo"}, "memory": {"enabled": true, "max_notes": 5}, "llm": {"model": "gpt-4o-mini"}}`

// memoryEnv is the shop tenant and another tenant, each with the memory
// bot "memo" published.
type memoryEnv struct {
	*chatEnv
	otherKey string
}

func newMemoryEnv(t *testing.T, e *chatEnv) *memoryEnv {
	t.Helper()
	m := &memoryEnv{chatEnv: e, otherKey: e.mustCreateTenant(t, "other")}
	op := platform.Operator()
	for _, tenant := range []string{"shop", "other"} {
		if _, _, err := e.svc.Bots().Create(context.Background(), op, tenant, "memo", []byte(memoryBot)); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(context.Background(), op, tenant, "memo", 1); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// talk starts a dialog of user (none when "") with the tenant's memo bot,
// sends text and returns the dialog's id and what the model was asked last.
func (m *memoryEnv) talk(t *testing.T, tenant, user, text string, replies ...llmtest.ServerReply) (string, *llmtest.ChatRequest) {
	t.Helper()
	key := map[string]string{"shop": m.key, "other": m.otherKey}[tenant]
	body := `{}`
	if user != "" {
		body = `{"user_id": "` + user + `"}`
	}
	r := m.raw(t, "POST", "/v1/tenants/"+tenant+"/bots/memo/dialogs", key, body)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
	}
	var d apiclient.Dialog
	if err := json.Unmarshal([]byte(r.body), &d); err != nil {
		t.Fatal(err)
	}
	m.llm.Enqueue(append(replies, llmtest.ServerReply{Text: "OK."})...)
	r = m.raw(t, "POST", "/v1/tenants/"+tenant+"/dialogs/"+d.ID+"/messages", key, `{"text": "`+text+`"}`)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("message: %d %s", r.StatusCode, r.body)
	}
	return d.ID, m.llm.LastRequest()
}

func remembers(key, value string) llmtest.ServerReply {
	args, _ := json.Marshal(map[string]string{"key": key, "value": value})
	return llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "remember_about_user", Arguments: string(args)}}}
}

func offers(req *llmtest.ChatRequest, name string) bool {
	for _, tl := range req.Tools {
		if tl.Function.Name == name {
			return true
		}
	}
	return false
}

func (m *memoryEnv) notes(t *testing.T, tenant, user string) []apiclient.MemoryNote {
	t.Helper()
	key := map[string]string{"shop": m.key, "other": m.otherKey}[tenant]
	got, err := apiclient.New(m.srv.URL, key).UserMemory(context.Background(), tenant, user)
	if err != nil {
		t.Fatal(err)
	}
	return got.Notes
}

func TestANoteFromOneDialogIsRecalledInTheSameUsersLaterDialogsOnly(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		m := newMemoryEnv(t, e)
		const recalled = "- favourite_colour: green"
		first, req := m.talk(t, "shop", "ann", "I like green", remembers("favourite_colour", "green"))
		if last := req.Messages[len(req.Messages)-1]; last.Role != "tool" || !strings.Contains(last.Text(), `Saved note "favourite_colour"`) {
			t.Fatalf("the tool answered %q", last.Text())
		}
		if !offers(req, "remember_about_user") || !offers(req, "forget_about_user") {
			t.Fatalf("the memory tools are not offered: %+v", req.Tools)
		}

		t.Run("the same user's next dialog recalls the note in its prompt", func(t *testing.T) {
			_, req := m.talk(t, "shop", "ann", "hello again")
			if system := req.Messages[0].Text(); !strings.Contains(system, "## What you remember about this user") || !strings.Contains(system, recalled) {
				t.Fatalf("system prompt:\n%s", system)
			}
		})
		t.Run("another user of the tenant has no such note", func(t *testing.T) {
			_, req := m.talk(t, "shop", "bob", "hello")
			if system := req.Messages[0].Text(); strings.Contains(system, "green") || !strings.Contains(system, "No notes yet.") {
				t.Fatalf("bob's prompt:\n%s", system)
			}
		})
		t.Run("the same user id in another tenant has no such note", func(t *testing.T) {
			_, req := m.talk(t, "other", "ann", "hello")
			if system := req.Messages[0].Text(); strings.Contains(system, "green") {
				t.Fatalf("the other tenant's ann sees:\n%s", system)
			}
		})
		// An anonymous widget visitor (anon_ ids) is the other user without a stable id; a
		// server key cannot name one (TestSignedAndAnonymousUsersNeverShareANamespace).
		t.Run("a dialog without a stable user has no memory at all", func(t *testing.T) {
			for _, user := range []string{""} {
				_, req := m.talk(t, "shop", user, "hello")
				if strings.Contains(req.Messages[0].Text(), "What you remember") || offers(req, "remember_about_user") {
					t.Fatalf("user %q gets memory", user)
				}
			}
		})
		t.Run("admins list the user's notes; another tenant cannot", func(t *testing.T) {
			notes := m.notes(t, "shop", "ann")
			if len(notes) != 1 || notes[0].Key != "favourite_colour" || notes[0].Value != "green" || notes[0].DialogID != first || notes[0].UserID != "ann" {
				t.Fatalf("notes %+v", notes)
			}
			if r := m.raw(t, "GET", "/v1/tenants/shop/end-users/ann/memory", m.otherKey, ""); r.StatusCode != http.StatusNotFound && r.StatusCode != http.StatusForbidden {
				t.Fatalf("another tenant's key reads ann's notes: %d %s", r.StatusCode, r.body)
			}
			if notes := m.notes(t, "other", "ann"); len(notes) != 0 {
				t.Fatalf("the other tenant lists %+v", notes)
			}
		})
		t.Run("the model forgets a note, and later dialogs no longer recall it", func(t *testing.T) {
			forget := llmtest.ServerReply{ToolCalls: []llmtest.ServerCall{{Name: "forget_about_user", Arguments: `{"key":"favourite_colour"}`}}}
			_, req := m.talk(t, "shop", "ann", "forget my colour", forget)
			if last := req.Messages[len(req.Messages)-1]; !strings.Contains(last.Text(), "Removed note") {
				t.Fatalf("forget answered %q", last.Text())
			}
			_, req = m.talk(t, "shop", "ann", "hello")
			if strings.Contains(req.Messages[0].Text(), recalled) {
				t.Fatal("a forgotten note is still recalled")
			}
		})
		t.Run("an admin deletes a note through the API", func(t *testing.T) {
			m.talk(t, "shop", "ann", "call me Annie", remembers("nickname", "Annie"))
			notes := m.notes(t, "shop", "ann")
			if len(notes) != 1 {
				t.Fatalf("notes %+v", notes)
			}
			if r := m.raw(t, "DELETE", "/v1/tenants/shop/end-users/bob/memory/"+notes[0].ID, m.key, ""); r.StatusCode != http.StatusNotFound {
				t.Fatalf("deleting ann's note as bob's: %d %s", r.StatusCode, r.body)
			}
			if r := m.raw(t, "DELETE", "/v1/tenants/shop/end-users/ann/memory/"+notes[0].ID, m.key, ""); r.StatusCode != http.StatusNoContent {
				t.Fatalf("delete: %d %s", r.StatusCode, r.body)
			}
			if _, req := m.talk(t, "shop", "ann", "hello"); strings.Contains(req.Messages[0].Text(), "Annie") {
				t.Fatal("a deleted note is still recalled")
			}
		})
		t.Run("erasing the end user deletes their notes", func(t *testing.T) {
			m.talk(t, "shop", "ann", "I live in Oslo", remembers("city", "Oslo"))
			m.talk(t, "other", "ann", "I live in Rome", remembers("city", "Rome"))
			r := m.raw(t, "DELETE", "/v1/tenants/shop/end-users/ann", m.key, "")
			var got apiclient.Erased
			if r.StatusCode != http.StatusOK || json.Unmarshal([]byte(r.body), &got) != nil || got.MemoryNotes != 1 {
				t.Fatalf("erase: %d %s", r.StatusCode, r.body)
			}
			if notes := m.notes(t, "shop", "ann"); len(notes) != 0 {
				t.Fatalf("notes left %+v", notes)
			}
			if _, req := m.talk(t, "shop", "ann", "hello"); strings.Contains(req.Messages[0].Text(), "Oslo") {
				t.Fatal("an erased user's note is recalled")
			}
			if notes := m.notes(t, "other", "ann"); len(notes) != 1 || notes[0].Value != "Rome" {
				t.Fatalf("the other tenant's ann lost her notes: %+v", notes)
			}
		})
	})
}

func TestAFullMemoryRefusesNewNotesWithAClearMessage(t *testing.T) {
	t.Parallel()
	forEachChat(t, dialog.Limits{}, func(t *testing.T, e *chatEnv) {
		m := newMemoryEnv(t, e)
		var replies []llmtest.ServerReply
		for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
			replies = append(replies, remembers(k, "x"))
		}
		_, req := m.talk(t, "shop", "ann", "remember lots", replies...)
		last := req.Messages[len(req.Messages)-1]
		if !strings.Contains(last.Text(), "memory is full") {
			t.Fatalf("the sixth note answered %q", last.Text())
		}
		if notes := m.notes(t, "shop", "ann"); len(notes) != 5 {
			t.Fatalf("%d notes kept, want max_notes 5", len(notes))
		}
	})
}

func TestRetentionExpiresNotesLastWrittenBeforeItsCutoff(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		m := newMemoryEnv(t, newChatEnv(t, st, dialog.Limits{}))
		if r := m.raw(t, "PATCH", "/v1/tenants/shop", m.key, `{"retention_days": 30}`); r.StatusCode != http.StatusOK {
			t.Fatalf("retention: %d %s", r.StatusCode, r.body)
		}
		m.talk(t, "shop", "ann", "I am Ann", remembers("name", "Ann"))
		m.talk(t, "shop", "ann", "I like tea", remembers("drink", "tea"))
		m.talk(t, "other", "ann", "I am Ann", remembers("name", "Ann")) // other keeps notes forever
		if err := st.DB().Exec("UPDATE memory_notes SET updated_at = ? WHERE key = ?", time.Now().UTC().AddDate(0, 0, -31), "name").Error; err != nil {
			t.Fatal(err)
		}
		if _, err := m.rt.Dialogs().SweepRetention(context.Background()); err != nil {
			t.Fatal(err)
		}
		if notes := m.notes(t, "shop", "ann"); len(notes) != 1 || notes[0].Key != "drink" {
			t.Fatalf("shop's notes after the sweep: %+v; want only the recent one", notes)
		}
		if notes := m.notes(t, "other", "ann"); len(notes) != 1 {
			t.Fatalf("a tenant without retention lost notes: %+v", notes)
		}
	})
}
