package store

import (
	"strings"
	"testing"
)

// Ids made one after the other sort in that order even within one
// millisecond: the outbox delivers a dialog's events in id order.
func TestIDsSortInTheOrderTheyWereMade(t *testing.T) {
	t.Parallel()
	prev := NewID("evt")
	for i := 0; i < 10000; i++ {
		id := NewID("evt")
		if strings.Compare(id, prev) <= 0 {
			t.Fatalf("id %d, %s, sorts before or at the one made before it, %s", i, id, prev)
		}
		prev = id
	}
}

// A dialog's id is all an anonymous visitor holds: two ids made in the
// same millisecond share their timestamp and the high bits of the random
// part, no more (the step between them is 56 random bits).
func TestIDsOfOneMillisecondCannotBeGuessedFromEachOther(t *testing.T) {
	t.Parallel()
	const stamp = len("dlg_") + 9 // the characters that hold only the timestamp
	a, b := NewID("dlg"), NewID("dlg")
	for a[:stamp] != b[:stamp] {
		a, b = b, NewID("dlg")
	}
	same := 0
	for i := stamp + 1; i < len(a); i++ {
		if a[i] == b[i] {
			same++
		}
	}
	if same > 10 { // the step's 56 bits are the last 11 characters; a plus-one step would leave 15 alike
		t.Fatalf("%s and %s, made in one millisecond, share %d of their 16 random characters", a, b, same)
	}
}
