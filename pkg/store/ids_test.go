package store

import (
	"strings"
	"testing"
)

// Webhook event ids made one after the other sort in that order even
// within one millisecond: the outbox delivers a dialog's events in id order.
func TestOrderedIDsSortInTheOrderTheyWereMade(t *testing.T) {
	prev := newOrderedID("evt")
	for i := 0; i < 10000; i++ {
		id := newOrderedID("evt")
		if strings.Compare(id, prev) <= 0 {
			t.Fatalf("id %d, %s, sorts before or at the one made before it, %s", i, id, prev)
		}
		prev = id
	}
}

// Other ids, a dialog's among them, are what an anonymous visitor holds:
// two made in the same millisecond share their timestamp and nothing more.
func TestIDsOfOneMillisecondCannotBeGuessedFromEachOther(t *testing.T) {
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
	if same > 8 { // chance: 16 of 32 characters each, 0.5 expected
		t.Fatalf("%s and %s, made in one millisecond, share %d of their 16 random characters", a, b, same)
	}
}
