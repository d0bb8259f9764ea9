package platform_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// The wiring passes every collaborator: a missing one is a start-up error
// that names it, never a default built behind the caller's back.
func TestNewRefusesMissingCollaborators(t *testing.T) {
	t.Parallel()
	st := storetest.OpenSQLite(t)
	tests := []struct {
		name   string
		change func(*platform.Options)
		want   string // in the error; "" for none
	}{
		{"every collaborator given builds the service", func(*platform.Options) {}, ""},
		{"no sealer is refused", func(o *platform.Options) { o.Sealer = nil }, "Options.Sealer"},
		{"no authorizer is refused", func(o *platform.Options) { o.Authorizer = nil }, "Options.Authorizer"},
		{"no clock is refused", func(o *platform.Options) { o.Clock = nil }, "Options.Clock"},
		{"no logger is refused", func(o *platform.Options) { o.Logger = nil }, "Options.Logger"},
		{"every missing one is named at once", func(o *platform.Options) { *o = platform.Options{} },
			"Options.Sealer, Options.Authorizer, Options.Clock, Options.Logger"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := platformtest.Fill(t, platform.Options{})
			tt.change(&opts)
			svc, err := platform.New(st, opts)
			switch {
			case tt.want == "" && (err != nil || svc == nil):
				t.Fatalf("New = %v, %v; want a service", svc, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("New error = %v; want one naming %q", err, tt.want)
			}
		})
	}
	if _, err := platform.New(nil, platformtest.Fill(t, platform.Options{})); err == nil || !strings.Contains(err.Error(), "store") {
		t.Fatalf("New without a store = %v; want an error naming it", err)
	}
}
