package store

import (
	"context"
	"slices"
	"testing"
)

// TestStep26FindsTheDialogOfFeedbackEventsWrittenWithoutIt: a
// feedback.created event written before the runtime named its dialog
// learns it from its body, so erasing the dialog or its user deletes it.
func TestStep26FindsTheDialogOfFeedbackEventsWrittenWithoutIt(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, Config{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, m := range migrations[:24] {
		if err := st.applyOnce(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO tenants (id, slug, name, created_at, updated_at) VALUES ('ten_1', 'acme', 'Acme', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)`,
		`INSERT INTO webhook_events (id, tenant_id, type, body, created_at) VALUES
 ('evt_1', 'ten_1', 'feedback.created', '{"type":"feedback.created","data":{"dialog_id":"dlg_a","user_id":"alice","comment":"slow"}}', CURRENT_TIMESTAMP),
 ('evt_2', 'ten_1', 'usage.quota_reached', '{"type":"usage.quota_reached","data":{"limit":5}}', CURRENT_TIMESTAMP)`,
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
	if want := []string{"evt_1=dlg_a", "evt_2="}; !slices.Equal(got, want) {
		t.Fatalf("dialog ids after step 26: %v; want %v", got, want)
	}
}
