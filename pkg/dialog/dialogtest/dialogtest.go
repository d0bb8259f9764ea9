// Package dialogtest builds dialog runtimes for tests: the dependencies a
// test does not care about get the values cmd/parley gives them.
package dialogtest

import (
	"log/slog"
	"testing"
	"time"

	"github.com/parleyhq/parley/configs"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/outbound"
	"github.com/parleyhq/parley/pkg/tool/builtin"
)

// New returns dialog.New(Fill(t, opts)), failing t on error.
func New(t testing.TB, opts dialog.Options) *dialog.Runtime {
	t.Helper()
	rt, err := dialog.New(Fill(t, opts))
	if err != nil {
		t.Fatal(err)
	}
	return rt
}

// Fill returns opts with its nil Catalog, Natives, HTTPClient, Clock and
// Logger set to the embedded model catalog, the native tools, an outbound
// client with the default policy (public addresses only), time.Now and a
// logger that discards. The Service and the Store are the caller's.
func Fill(t testing.TB, opts dialog.Options) dialog.Options {
	t.Helper()
	if opts.Catalog == nil {
		catalog, err := llm.LoadCatalog(configs.Models())
		if err != nil {
			t.Fatal(err)
		}
		opts.Catalog = catalog
	}
	if opts.Natives == nil {
		opts.Natives = builtin.NewRegistry()
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = outbound.NewClient(outbound.Policy{}, outbound.Options{})
	}
	if opts.Clock == nil {
		opts.Clock = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return opts
}
