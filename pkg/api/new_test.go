package api_test

import (
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/api"
)

// TestNewRefusesToServeWithoutARuntime: a server wired without its dialog
// runtime fails at start-up, naming it, instead of making one up.
func TestNewRefusesToServeWithoutARuntime(t *testing.T) {
	h, err := api.New(api.Options{})
	if err == nil || h != nil {
		t.Fatalf("New = %v, %v; want an error", h, err)
	}
	if !strings.Contains(err.Error(), "Options.Runtime") {
		t.Fatalf("error %q does not name Options.Runtime", err)
	}
}
