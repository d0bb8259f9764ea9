package dialog

import (
	"fmt"

	"github.com/parleyhq/parley/pkg/platform"
)

// problems collects request problems so all of them are reported at once.
type problems []platform.Detail

func (ps *problems) add(pointer, format string, args ...any) {
	*ps = append(*ps, platform.Detail{Pointer: pointer, Message: fmt.Sprintf(format, args...)})
}

// err returns nil when nothing was wrong, else an invalid Error.
func (ps problems) err() error {
	if len(ps) == 0 {
		return nil
	}
	return platform.Invalid(ps...)
}
