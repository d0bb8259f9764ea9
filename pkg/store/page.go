package store

import (
	"regexp"

	"gorm.io/gorm"
)

// DefaultPageSize and MaxPageSize bound list queries.
const (
	DefaultPageSize = 50
	MaxPageSize     = 200
)

// Page asks for one page of a list: the items after Cursor (the NextCursor of
// the previous page, empty for the first), at most Limit of them.
type Page struct {
	Cursor string
	Limit  int
	// Desc lists the largest key first (with time-ordered ids, the
	// newest); the cursor then pages down.
	Desc bool
}

func (p Page) limit() int {
	switch {
	case p.Limit <= 0:
		return DefaultPageSize
	case p.Limit > MaxPageSize:
		return MaxPageSize
	default:
		return p.Limit
	}
}

// paged applies keyset paging on a unique, sortable string column. It asks
// for one extra row to learn whether another page exists without a count.
// A cursor that is not an id made by NewID fails the query with
// ErrInvalidCursor, so a mangled cursor is an error rather than a silently
// empty page.
func paged(q *gorm.DB, column string, p Page) *gorm.DB {
	if p.Cursor != "" {
		if !idPattern.MatchString(p.Cursor) {
			q.AddError(ErrInvalidCursor)
			return q
		}
		if p.Desc {
			q = q.Where(column+" < ?", p.Cursor)
		} else {
			q = q.Where(column+" > ?", p.Cursor)
		}
	}
	if p.Desc {
		return q.Order(column + " DESC").Limit(p.limit() + 1)
	}
	return q.Order(column).Limit(p.limit() + 1)
}

// nextCursor trims the extra row paged asked for and returns the cursor of
// the next page, or "" on the last one.
func nextCursor[T any](rows []T, p Page, key func(T) string) ([]T, string) {
	if len(rows) <= p.limit() {
		return rows, ""
	}
	rows = rows[:p.limit()]
	return rows, key(rows[len(rows)-1])
}

// idPattern matches the ids NewID makes: a prefix, "_" and 26 characters of
// idEncoding's alphabet.
var idPattern = regexp.MustCompile(`^[a-z]{3}_[0-9a-hjkmnp-tv-z]{26}$`)
