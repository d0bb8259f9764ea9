package dialog

import (
	"errors"
	"testing"

	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/store"
)

// TestARefusedInactiveDialogIsAConflict: the lease's refusal of a handed-off
// or closed dialog reaches a caller that does not answer it itself (a
// resume that lost the race to a handoff) as a conflict, not an internal
// error.
func TestARefusedInactiveDialogIsAConflict(t *testing.T) {
	t.Parallel()
	var err error = &inactiveDialog{dialog: &store.Dialog{ID: "dlg_1", Status: store.DialogHandoff}}
	var pe *platform.Error
	if !errors.As(err, &pe) || pe.Code != platform.CodeConflict {
		t.Fatalf("error %v is %+v", err, pe)
	}
}
