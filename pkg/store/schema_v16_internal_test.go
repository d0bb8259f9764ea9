package store

import (
	"context"
	"testing"
)

// TestStep16FindsTheDialogOfEventsWrittenBeforeIt: an outbox row written
// before events named their dialog learns it from its body, so erasing
// the dialog deletes it too.
func TestStep16FindsTheDialogOfEventsWrittenBeforeIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := Open(ctx, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, m := range migrations[:15] {
		if err := st.applyOnce(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO tenants (id, slug, name, created_at, updated_at) VALUES ('ten_1', 'acme', 'Acme', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
		`INSERT INTO webhook_events (id, tenant_id, type, body, created_at) VALUES
 ('evt_1', 'ten_1', 'dialog.created', '{"type":"dialog.created","data":{"dialog":{"id":"dlg_a"},"bot":"b"}}', CURRENT_TIMESTAMP),
 ('evt_2', 'ten_1', 'message.created', '{"type":"message.created","data":{"dialog_id":"dlg_b","message":{"text":"hi"}}}', CURRENT_TIMESTAMP),
 ('evt_3', 'ten_1', 'usage.quota_reached', '{"type":"usage.quota_reached","data":{"limit":5}}', CURRENT_TIMESTAMP)`,
	} {
		if _, err := st.exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := st.strings(ctx, `SELECT id || '=' || dialog_id FROM webhook_events ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"evt_1=dlg_a", "evt_2=dlg_b", "evt_3="}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("dialog ids after step 16: %v; want %v", got, want)
	}
}
