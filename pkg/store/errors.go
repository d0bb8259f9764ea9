package store

import (
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// ErrNotFound means no row matched, including a row that belongs to another
// tenant.
var ErrNotFound = errors.New("not found")

// ErrConflict means a unique value (a slug, an email, a version number) is
// already taken.
var ErrConflict = errors.New("conflict")

// ErrInactive means a dialog is handed off or closed: no run answers it,
// so Leases.Take takes no lease for it.
var ErrInactive = errors.New("dialog inactive")

// wrap turns driver errors into the package's sentinels, keeping where the
// error happened. Both drivers translate constraint violations to gorm's
// errors because Open sets TranslateError.
func wrap(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound):
		return fmt.Errorf("store: %s: %w", op, ErrNotFound)
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return fmt.Errorf("store: %s: %w", op, ErrConflict)
	default:
		return fmt.Errorf("store: %s: %w", op, err)
	}
}

// ErrInvalidCursor means a page cursor was not one this package handed out.
var ErrInvalidCursor = errors.New("invalid cursor")
