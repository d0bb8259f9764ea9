package api_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// eraseEnv is the chat API over a store the test reads directly, with a
// second tenant whose rows must never be touched.
type eraseEnv struct {
	*chatEnv
	st       *store.Store
	otherKey string
}

func forEachErase(t *testing.T, fn func(t *testing.T, e *eraseEnv)) {
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := &eraseEnv{chatEnv: newChatEnv(t, st, dialog.Limits{}), st: st}
		e.otherKey = e.mustCreateTenant(t, "other")
		ctx, op := context.Background(), platform.Operator()
		if _, err := e.svc.Secrets().Put(ctx, op, "other", "shop_token", chatSecret); err != nil {
			t.Fatal(err)
		}
		if _, _, err := e.svc.Bots().Create(ctx, op, "other", "helper", []byte(chatBot(e.shop.URL))); err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.Versions().Publish(ctx, op, "other", "helper", 1); err != nil {
			t.Fatal(err)
		}
		// Both tenants take every event, so each dialog leaves outbox rows
		// quoting its messages; no deliverer runs, so they stay pending.
		for _, tenant := range []string{"shop", "other"} {
			if _, err := e.svc.Webhooks().Create(ctx, op, tenant, platform.WebhookInput{URL: "https://receiver.example/hook", Events: []string{"*"}}); err != nil {
				t.Fatal(err)
			}
		}
		fn(t, e)
	})
}

// talk starts a dialog of user in tenant and has one turn with two tool
// calls, sent with an Idempotency-Key, so every per-dialog table has rows.
func (e *eraseEnv) talk(t *testing.T, tenant, key, user string) string {
	t.Helper()
	r := e.raw(t, "POST", "/v1/tenants/"+tenant+"/bots/helper/dialogs", key, `{"user_id":"`+user+`"}`)
	if r.StatusCode != http.StatusCreated {
		t.Fatalf("create dialog: %d %s", r.StatusCode, r.body)
	}
	var d apiclient.Dialog
	if err := json.Unmarshal([]byte(r.body), &d); err != nil {
		t.Fatal(err)
	}
	twoToolTurn(e.chatEnv)
	r = e.raw(t, "POST", "/v1/tenants/"+tenant+"/dialogs/"+d.ID+"/messages", key, `{"text":"A7? tents? `+said(d.ID)+`"}`,
		"Idempotency-Key", "idem-"+d.ID)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("message: %d %s", r.StatusCode, r.body)
	}
	// The user rates the reply with a comment in their own words: the
	// feedback row and its feedback.created event quote them.
	var turn apiclient.Turn
	if err := json.Unmarshal([]byte(r.body), &turn); err != nil {
		t.Fatal(err)
	}
	reply := turn.Messages[len(turn.Messages)-1].ID
	r = e.raw(t, "POST", "/v1/tenants/"+tenant+"/dialogs/"+d.ID+"/messages/"+reply+"/feedback", key,
		`{"rating":"down","comment":"slow, `+said(d.ID)+`"}`)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("feedback: %d %s", r.StatusCode, r.body)
	}
	return d.ID
}

// said is what the end user writes in dialog id: words found nowhere else,
// to look for in every cell of the database.
func said(id string) string { return "my-words-in-" + id }

// rows counts what the database holds about the dialogs: the dialog rows,
// their messages, tool calls, leases, Idempotency-Key records, and the
// webhook events about them with their deliveries.
func (e *eraseEnv) rows(t *testing.T, ids ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	db := e.st.DB()
	for table, query := range map[string]string{
		"dialogs":          "SELECT count(*) FROM dialogs WHERE id IN ?",
		"messages":         "SELECT count(*) FROM messages WHERE dialog_id IN ?",
		"tool_calls":       "SELECT count(*) FROM tool_calls WHERE dialog_id IN ?",
		"dialog_leases":    "SELECT count(*) FROM dialog_leases WHERE dialog_id IN ?",
		"idempotency_keys": "SELECT count(*) FROM idempotency_keys WHERE key IN ?",
		"webhook_events":   "SELECT count(*) FROM webhook_events WHERE dialog_id IN ?",
		"webhook_deliveries": `SELECT count(*) FROM webhook_deliveries WHERE event_id IN
  (SELECT id FROM webhook_events WHERE dialog_id IN ?)`,
	} {
		args := ids
		if table == "idempotency_keys" {
			args = nil
			for _, id := range ids {
				args = append(args, "idem-"+id)
			}
		}
		var n int64
		if err := db.Raw(query, args).Scan(&n).Error; err != nil {
			t.Fatal(err)
		}
		out[table] = n
	}
	return out
}

func (e *eraseEnv) mustHaveAll(t *testing.T, what string, ids ...string) {
	t.Helper()
	got := e.rows(t, ids...)
	for _, table := range []string{"dialogs", "messages", "tool_calls", "idempotency_keys", "webhook_events", "webhook_deliveries"} {
		if got[table] == 0 {
			t.Errorf("%s: no %s rows left: %v", what, table, got)
		}
	}
	if got["dialogs"] != int64(len(ids)) {
		t.Errorf("%s: %d of %d dialogs left", what, got["dialogs"], len(ids))
	}
	e.mustQuote(t, what, ids...)
}

func (e *eraseEnv) mustHaveNone(t *testing.T, what string, ids ...string) {
	t.Helper()
	for table, n := range e.rows(t, ids...) {
		if n != 0 {
			t.Errorf("%s: %d %s rows left", what, n, table)
		}
	}
	cells := storetest.EveryCell(t, e.st)
	for _, id := range ids {
		for where, cell := range cells {
			if strings.Contains(cell, said(id)) {
				t.Errorf("%s: what the user wrote in %s is still in %s", what, id, where)
			}
		}
	}
}

// mustQuote checks the database still holds what the user wrote in each
// dialog, in its messages and in its webhook events: what mustHaveNone
// looks for is there to be found.
func (e *eraseEnv) mustQuote(t *testing.T, what string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		tables := map[string]bool{}
		for where, cell := range storetest.EveryCell(t, e.st) {
			if strings.Contains(cell, said(id)) {
				tables[strings.Fields(where)[0]] = true
			}
		}
		if !tables["messages"] || !tables["webhook_events"] {
			t.Errorf("%s: what the user wrote in %s is in %v; want messages and webhook_events", what, id, tables)
		}
	}
}

func TestDeletingADialogLeavesNoRowOfItAndTouchesNoOther(t *testing.T) {
	t.Parallel()
	forEachErase(t, func(t *testing.T, e *eraseEnv) {
		doomed, kept := e.talk(t, "shop", e.key, "u1"), e.talk(t, "shop", e.key, "u1")
		theirs := e.talk(t, "other", e.otherKey, "u1")
		e.mustHaveAll(t, "before", doomed)

		if r := e.raw(t, "DELETE", "/v1/tenants/other/dialogs/"+doomed, e.otherKey, ""); r.StatusCode != http.StatusNotFound {
			t.Fatalf("another tenant deleting the dialog: %d %s; want 404", r.StatusCode, r.body)
		}
		e.mustHaveAll(t, "after another tenant's attempt", doomed)

		if r := e.raw(t, "DELETE", "/v1/tenants/shop/dialogs/"+doomed, e.key, ""); r.StatusCode != http.StatusNoContent {
			t.Fatalf("delete: %d %s; want 204", r.StatusCode, r.body)
		}
		e.mustHaveNone(t, "the deleted dialog", doomed)
		e.mustHaveAll(t, "the same user's other dialog", kept)
		e.mustHaveAll(t, "the other tenant's dialog", theirs)
		if r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/"+doomed, e.key, ""); r.StatusCode != http.StatusNotFound {
			t.Errorf("reading the deleted dialog: %d; want 404", r.StatusCode)
		}
		if r := e.raw(t, "DELETE", "/v1/tenants/shop/dialogs/"+doomed, e.key, ""); r.StatusCode != http.StatusNotFound {
			t.Errorf("deleting it again: %d; want 404", r.StatusCode)
		}
		if m := e.raw(t, "GET", "/metrics", "", ""); !strings.Contains(m.body, `parley_dialogs_deleted_total{reason="request"} 1`) {
			t.Errorf("/metrics does not count the deletion:\n%s", m.body)
		}
	})
}

func TestADialogThatIsAnsweringIsNotDeleted(t *testing.T) {
	t.Parallel()
	forEachErase(t, func(t *testing.T, e *eraseEnv) {
		d := e.talk(t, "shop", e.key, "u1")
		tenant, err := e.st.Tenants().Get(context.Background(), "shop")
		if err != nil {
			t.Fatal(err)
		}
		// Another server runs the dialog: it holds the lease.
		if ok, err := e.st.Tenant(tenant.ID).Leases().Acquire(context.Background(), d, "elsewhere", time.Now(), time.Minute); !ok || err != nil {
			t.Fatalf("lease: %v %v", ok, err)
		}
		r := e.raw(t, "DELETE", "/v1/tenants/shop/dialogs/"+d, e.key, "")
		if r.StatusCode != http.StatusConflict {
			t.Fatalf("deleting a running dialog: %d %s; want 409", r.StatusCode, r.body)
		}
		e.mustHaveAll(t, "the running dialog", d)
		r = e.raw(t, "DELETE", "/v1/tenants/shop/end-users/u1", e.key, "")
		if r.StatusCode != http.StatusConflict {
			t.Fatalf("erasing the user of a running dialog: %d %s; want 409", r.StatusCode, r.body)
		}
		e.mustHaveAll(t, "the running dialog after erasure", d)
	})
}

func TestErasingAnEndUserLeavesNoRowOfThemAndTouchesNoOther(t *testing.T) {
	t.Parallel()
	forEachErase(t, func(t *testing.T, e *eraseEnv) {
		hers := []string{e.talk(t, "shop", e.key, "alice"), e.talk(t, "shop", e.key, "alice")}
		his := e.talk(t, "shop", e.key, "bob")
		namesake := e.talk(t, "other", e.otherKey, "alice")

		r := e.raw(t, "DELETE", "/v1/tenants/shop/end-users/alice", e.key, "")
		if r.StatusCode != http.StatusOK {
			t.Fatalf("erase: %d %s", r.StatusCode, r.body)
		}
		var got apiclient.Erased
		if err := json.Unmarshal([]byte(r.body), &got); err != nil {
			t.Fatal(err)
		}
		// Each turn stores five messages: the user's text, the call of two
		// tools, their two results and the answer.
		if got.Dialogs != 2 || got.Messages != 2*5 {
			t.Errorf("erased %+v; want 2 dialogs and 10 messages", got)
		}
		e.mustHaveNone(t, "alice's dialogs", hers...)
		e.mustHaveAll(t, "bob's dialog", his)
		// No event left in the outbox names her, whatever its type.
		tenant, err := e.st.Tenants().Get(context.Background(), "shop")
		if err != nil {
			t.Fatal(err)
		}
		var named []string
		if err := e.st.DB().Raw("SELECT type FROM webhook_events WHERE tenant_id = ? AND body LIKE ?", tenant.ID, `%"user_id":"alice"%`).
			Scan(&named).Error; err != nil {
			t.Fatal(err)
		}
		if len(named) > 0 {
			t.Errorf("events naming alice left in the outbox: %v", named)
		}
		e.mustHaveAll(t, "the other tenant's alice", namesake)

		r = e.raw(t, "DELETE", "/v1/tenants/shop/end-users/alice", e.key, "")
		if r.StatusCode != http.StatusOK || r.body != `{"dialogs":0,"messages":0,"memory_notes":0}` {
			t.Errorf("erasing again: %d %s; want 200 with nothing erased", r.StatusCode, r.body)
		}
	})
}

// TestTheErasureAuditEntryCannotBeTurnedBackIntoTheUserID: the audit log
// keeps who was erased only as a keyed digest. An unkeyed hash of a
// guessable id (an email, a customer number) is the id to whoever hashes
// the guesses; the keyed one needs the server's secrets key.
func TestTheErasureAuditEntryCannotBeTurnedBackIntoTheUserID(t *testing.T) {
	forEachErase(t, func(t *testing.T, e *eraseEnv) {
		const user = "alice@example.com"
		e.talk(t, "shop", e.key, user)
		e.talk(t, "other", e.otherKey, user)
		erased := func(tenant, key string) []string {
			t.Helper()
			if r := e.raw(t, "DELETE", "/v1/tenants/"+tenant+"/end-users/"+user, key, ""); r.StatusCode != http.StatusOK {
				t.Fatalf("erase in %s: %d %s", tenant, r.StatusCode, r.body)
			}
			r := e.raw(t, "GET", "/v1/tenants/"+tenant+"/audit-log?action=end_user.erased", key, "")
			var page apiclient.AuditLog
			if err := json.Unmarshal([]byte(r.body), &page); err != nil || r.StatusCode != http.StatusOK {
				t.Fatalf("audit log of %s: %d %s", tenant, r.StatusCode, r.body)
			}
			var targets []string
			for _, en := range page.Entries {
				targets = append(targets, en.Target)
			}
			return targets
		}
		erased("shop", e.key)
		shop := erased("shop", e.key)
		other := erased("other", e.otherKey)
		if len(shop) != 2 || len(other) != 1 {
			t.Fatalf("audit entries: shop %v, other %v; want two and one", shop, other)
		}
		sum := sha256.Sum256([]byte(user))
		for _, target := range append(shop, other...) {
			if strings.Contains(target, user) || strings.Contains(target, hex.EncodeToString(sum[:])) {
				t.Errorf("audit target %q names the user or their unkeyed hash", target)
			}
		}
		if shop[0] != shop[1] {
			t.Errorf("erasing the same user twice is recorded as %q and %q; want the same digest", shop[0], shop[1])
		}
		if shop[0] == other[0] {
			t.Errorf("the same id in two tenants has one digest %q: the log links two tenants' users", shop[0])
		}
	})
}

// export reads GET /dialogs/export?query as JSON Lines.
func (e *eraseEnv) export(t *testing.T, query string) []apiclient.DialogDetail {
	t.Helper()
	r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/export?"+query, e.key, "")
	if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("export?%s: %d %q %s", query, r.StatusCode, r.Header.Get("Content-Type"), r.body)
	}
	var out []apiclient.DialogDetail
	for _, line := range strings.Split(strings.TrimSuffix(r.body, "\n"), "\n") {
		if line == "" {
			continue
		}
		var dd apiclient.DialogDetail
		if err := json.Unmarshal([]byte(line), &dd); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, dd)
	}
	return out
}

func TestExportStreamsTheTenantsDialogsWithTheirMessagesAsJSONLines(t *testing.T) {
	t.Parallel()
	forEachErase(t, func(t *testing.T, e *eraseEnv) {
		talked := e.talk(t, "shop", e.key, "alice")
		e.talk(t, "other", e.otherKey, "alice")
		// More dialogs than one page of the export holds.
		var bare []string
		for range 55 {
			bare = append(bare, e.dialog(t))
		}
		tenant, err := e.st.Tenants().Get(context.Background(), "shop")
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.Tenant(tenant.ID).Dialogs().SetStatus(context.Background(), bare[0], store.DialogClosed); err != nil {
			t.Fatal(err)
		}

		all := e.export(t, "")
		if len(all) != 56 {
			t.Fatalf("exported %d dialogs; want the tenant's 56", len(all))
		}
		seen := map[string]bool{}
		for _, dd := range all {
			if seen[dd.ID] {
				t.Errorf("dialog %s exported twice", dd.ID)
			}
			seen[dd.ID] = true
		}
		if all[0].ID != talked || len(all[0].Messages) != 5 || len(all[0].ToolCalls) != 2 {
			t.Errorf("first line: %s with %d messages, %d tool calls; want %s with 5 and 2",
				all[0].ID, len(all[0].Messages), len(all[0].ToolCalls), talked)
		}
		if all[0].Messages[0].Text != "A7? tents? "+said(talked) {
			t.Errorf("first message %q; want the user's text", all[0].Messages[0].Text)
		}

		if got := e.export(t, "status=closed"); len(got) != 1 || got[0].ID != bare[0] {
			t.Errorf("status=closed exported %d dialogs; want %s only", len(got), bare[0])
		}
		today := time.Now().UTC().Format(time.DateOnly)
		yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
		if got := e.export(t, "bot=helper&from="+today+"&to="+today); len(got) != 56 {
			t.Errorf("from and to today: %d dialogs; want 56", len(got))
		}
		if got := e.export(t, "to="+yesterday); len(got) != 0 {
			t.Errorf("to yesterday: %d dialogs; want none", len(got))
		}
		for _, bad := range []string{"from=soon", "status=gone", "from=" + today + "&to=" + yesterday} {
			if r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/export?"+bad, e.key, ""); r.StatusCode != http.StatusUnprocessableEntity &&
				r.StatusCode != http.StatusBadRequest {
				t.Errorf("export?%s: %d %s; want a 4xx saying why", bad, r.StatusCode, r.body)
			}
		}
		if r := e.raw(t, "GET", "/v1/tenants/shop/dialogs/export?bot=nobot", e.key, ""); r.StatusCode != http.StatusNotFound {
			t.Errorf("export of an unknown bot: %d; want 404", r.StatusCode)
		}
	})
}

func TestDialogsOutlivingTheTenantsRetentionAreSweptAway(t *testing.T) {
	t.Parallel()
	forEachErase(t, func(t *testing.T, e *eraseEnv) {
		for _, bad := range []string{`{"retention_days": -1}`, `{"retention_days": 100000}`, `{"retention_days": "30"}`} {
			if r := e.raw(t, "PATCH", "/v1/tenants/shop", e.key, bad); r.StatusCode != http.StatusUnprocessableEntity && r.StatusCode != http.StatusBadRequest {
				t.Errorf("PATCH %s: %d %s; want a 4xx", bad, r.StatusCode, r.body)
			}
		}
		r := e.raw(t, "PATCH", "/v1/tenants/shop", e.key, `{"retention_days": 30}`)
		var tn apiclient.Tenant
		if err := json.Unmarshal([]byte(r.body), &tn); err != nil || r.StatusCode != http.StatusOK || tn.RetentionDays != 30 {
			t.Fatalf("PATCH retention_days: %d %s", r.StatusCode, r.body)
		}
		if r := e.raw(t, "GET", "/v1/tenants/shop", e.key, ""); !strings.Contains(r.body, `"retention_days":30`) {
			t.Errorf("GET tenant after PATCH: %s", r.body)
		}

		stale := []string{e.talk(t, "shop", e.key, "alice"), e.talk(t, "shop", e.key, "bob")}
		running := e.talk(t, "shop", e.key, "carol")
		fresh := e.talk(t, "shop", e.key, "dave")
		theirs := e.talk(t, "other", e.otherKey, "alice") // other keeps dialogs forever
		old := time.Now().UTC().AddDate(0, 0, -31)
		if err := e.st.DB().Exec("UPDATE dialogs SET updated_at = ? WHERE id IN ?", old,
			append([]string{running, theirs}, stale...)).Error; err != nil {
			t.Fatal(err)
		}
		tenant, _ := e.st.Tenants().Get(context.Background(), "shop")
		if ok, err := e.st.Tenant(tenant.ID).Leases().Acquire(context.Background(), running, "elsewhere", time.Now(), time.Minute); !ok || err != nil {
			t.Fatalf("lease: %v %v", ok, err)
		}

		got, err := e.rt.Dialogs().SweepRetention(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got.Dialogs != 2 || got.Messages != 10 {
			t.Errorf("swept %+v; want the 2 stale dialogs and their 10 messages", got)
		}
		e.mustHaveNone(t, "stale dialogs", stale...)
		e.mustHaveAll(t, "a stale dialog a run holds", running)
		e.mustHaveAll(t, "a recent dialog", fresh)
		e.mustHaveAll(t, "a stale dialog of a tenant without retention", theirs)
		if again, err := e.rt.Dialogs().SweepRetention(context.Background()); err != nil || again.Dialogs != 0 {
			t.Errorf("a second sweep: %+v %v; want nothing", again, err)
		}
	})
}
