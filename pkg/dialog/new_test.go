package dialog_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
)

// TestNewRefusesAMissingDependency: a runtime wired without one of its
// dependencies fails at start-up, naming it, instead of making one up.
func TestNewRefusesAMissingDependency(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, e *env) {
		full := func() dialog.Options { return dialogtest.Fill(t, dialog.Options{Service: e.svc, Store: e.store}) }
		cases := []struct {
			name, field string
			drop        func(*dialog.Options)
		}{
			{"without the platform service", "Service", func(o *dialog.Options) { o.Service = nil }},
			{"without the store", "Store", func(o *dialog.Options) { o.Store = nil }},
			{"without the model catalog", "Catalog", func(o *dialog.Options) { o.Catalog = nil }},
			{"without the outbound client", "HTTPClient", func(o *dialog.Options) { o.HTTPClient = nil }},
			{"without the native tools", "Natives", func(o *dialog.Options) { o.Natives = nil }},
			{"without a clock", "Clock", func(o *dialog.Options) { o.Clock = nil }},
			{"without a logger", "Logger", func(o *dialog.Options) { o.Logger = nil }},
		}
		for _, tc := range cases {
			t.Run(tc.name+" it fails naming "+tc.field, func(t *testing.T) {
				opts := full()
				tc.drop(&opts)
				rt, err := dialog.New(opts)
				if err == nil || rt != nil {
					t.Fatalf("New = %v, %v; want an error", rt, err)
				}
				if !strings.Contains(err.Error(), "Options."+tc.field) {
					t.Fatalf("error %q does not name Options.%s", err, tc.field)
				}
			})
		}
		t.Run("with every dependency it starts", func(t *testing.T) {
			if _, err := dialog.New(full()); err != nil {
				t.Fatal(err)
			}
		})
	})
}
