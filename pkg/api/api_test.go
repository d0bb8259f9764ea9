package api_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/parleyhq/parley/pkg/api"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// The wiring passes every dependency: a missing one is a start-up error
// that names it, never a default built behind the caller's back.
func TestNewRefusesMissingDependencies(t *testing.T) {
	t.Parallel()
	st := storetest.OpenSQLite(t)
	e := newEnv(t, st)
	rt := dialogtest.New(t, dialog.Options{Service: e.svc, Store: st})
	full := func() api.Options {
		return api.Options{Platform: e.svc, Runtime: rt, Logger: slog.New(slog.DiscardHandler), Metrics: prometheus.NewRegistry()}
	}
	tests := []struct {
		name   string
		change func(*api.Options)
		want   string // in the error; "" for none
	}{
		{"every dependency given builds the handler", func(*api.Options) {}, ""},
		{"no platform is refused", func(o *api.Options) { o.Platform = nil }, "Options.Platform"},
		{"no runtime is refused", func(o *api.Options) { o.Runtime = nil }, "Options.Runtime"},
		{"no logger is refused", func(o *api.Options) { o.Logger = nil }, "Options.Logger"},
		{"no metrics registry is refused", func(o *api.Options) { o.Metrics = nil }, "Options.Metrics"},
		{"every missing one is named at once", func(o *api.Options) { *o = api.Options{} }, "Options.Platform, Options.Runtime, Options.Logger, Options.Metrics"},
		{"a registry that already holds the API's metrics is refused", func(o *api.Options) { o.Metrics = e.reg }, "metrics"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := full()
			tt.change(&opts)
			h, err := api.New(opts)
			switch {
			case tt.want == "" && (err != nil || h == nil):
				t.Fatalf("New = %v, %v; want a handler", h, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("New error = %v; want one naming %q", err, tt.want)
			}
		})
	}
}
