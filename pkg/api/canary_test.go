package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

func TestACanaryTakesItsShareOfNewDialogsMeteredApartThenIsPromotedOrDropped(t *testing.T) {
	t.Parallel()
	storetest.ForEach(t, func(t *testing.T, st *store.Store) {
		e := newEnv(t, st)
		cl := e.client(e.mustCreateTenant(t, "acme"))
		ctx := context.Background()
		if _, err := cl.CreateBot(ctx, "acme", "helper", botConfig(t)); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Publish(ctx, "acme", "helper", 1); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.CreateVersion(ctx, "acme", "helper", json.RawMessage(`{"basic_settings": {"name": "Candidate"}}`)); err != nil {
			t.Fatal(err)
		}
		newDialogVersion := func(t *testing.T) int {
			t.Helper()
			d, err := cl.CreateDialog(ctx, "acme", "helper", apiclient.CreateDialogRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if d.Preview {
				t.Errorf("dialog %s is a preview; a canary dialog is a real one", d.ID)
			}
			return d.Version
		}

		t.Run("a bad canary is refused with where and why", func(t *testing.T) {
			for _, tc := range []struct {
				version, percent int
				code, pointer    string
			}{
				{2, 0, apiclient.CodeInvalid, "/percent"},
				{2, 101, apiclient.CodeInvalid, "/percent"},
				{1, 10, apiclient.CodeInvalid, "/version"},
				{9, 10, apiclient.CodeNotFound, ""},
			} {
				_, err := cl.SetCanary(ctx, "acme", "helper", tc.version, tc.percent)
				ae := apiError(t, err, tc.code)
				if tc.pointer != "" && (len(ae.Details) == 0 || ae.Details[0].Pointer != tc.pointer) {
					t.Errorf("canary v%d at %d%%: %+v, want pointer %s", tc.version, tc.percent, ae, tc.pointer)
				}
			}
		})

		b, err := cl.SetCanary(ctx, "acme", "helper", 2, 100)
		if err != nil || b.CanaryVersion != 2 || b.CanaryPercent != 100 || b.PublishedVersion != 1 {
			t.Fatalf("set canary = %+v, %v", b, err)
		}
		t.Run("its share of new dialogs runs the candidate, metered apart", func(t *testing.T) {
			for i := 0; i < 3; i++ {
				if v := newDialogVersion(t); v != 2 {
					t.Fatalf("dialog %d runs version %d, want the canary 2", i, v)
				}
			}
			c, err := cl.GetCanary(ctx, "acme", "helper")
			if err != nil {
				t.Fatal(err)
			}
			if c.Version != 2 || c.Percent != 100 || c.Canary.Dialogs != 3 || c.Live.Dialogs != 0 || c.Live.Version != 1 {
				t.Fatalf("canary = %+v", c)
			}
			m := e.raw(t, "GET", "/metrics", "", "").body
			if !strings.Contains(m, `parley_dialogs_created_total{variant="canary"} 3`) {
				t.Errorf("metrics lack the canary dialogs:\n%s", m)
			}
		})
		t.Run("dropping it sends every new dialog to the live version", func(t *testing.T) {
			b, err := cl.DropCanary(ctx, "acme", "helper")
			if err != nil || b.CanaryVersion != 0 || b.PublishedVersion != 1 {
				t.Fatalf("drop = %+v, %v", b, err)
			}
			if v := newDialogVersion(t); v != 1 {
				t.Fatalf("a new dialog runs version %d after the drop, want 1", v)
			}
			_, err = cl.GetCanary(ctx, "acme", "helper")
			apiError(t, err, apiclient.CodeNotFound)
			_, err = cl.PromoteCanary(ctx, "acme", "helper")
			apiError(t, err, apiclient.CodeConflict)
		})
		t.Run("a bot that requires passing tests takes no untested canary", func(t *testing.T) {
			if _, err := cl.UpdateBot(ctx, "acme", "helper", apiclient.UpdateBotRequest{RequirePassingTests: ptr(true)}); err != nil {
				t.Fatal(err)
			}
			_, err := cl.SetCanary(ctx, "acme", "helper", 2, 50)
			apiError(t, err, apiclient.CodeInvalid)
			if _, err := cl.UpdateBot(ctx, "acme", "helper", apiclient.UpdateBotRequest{RequirePassingTests: ptr(false)}); err != nil {
				t.Fatal(err)
			}
		})
		t.Run("promoting publishes the candidate and ends the canary", func(t *testing.T) {
			if _, err := cl.SetCanary(ctx, "acme", "helper", 2, 25); err != nil {
				t.Fatal(err)
			}
			b, err := cl.PromoteCanary(ctx, "acme", "helper")
			if err != nil || b.PublishedVersion != 2 || b.CanaryVersion != 0 {
				t.Fatalf("promote = %+v, %v", b, err)
			}
			if v := newDialogVersion(t); v != 2 {
				t.Fatalf("a new dialog runs version %d after the promotion, want 2", v)
			}
		})
	})
}
