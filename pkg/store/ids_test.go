package store

import (
	"strings"
	"testing"
)

// Ids made one after the other sort in that order even within one
// millisecond: webhook events of a dialog are delivered in id order.
func TestNewIDsSortInTheOrderTheyWereMade(t *testing.T) {
	prev := NewID("x")
	for i := 0; i < 10000; i++ {
		id := NewID("x")
		if strings.Compare(id, prev) <= 0 {
			t.Fatalf("id %d, %s, sorts before or at the one made before it, %s", i, id, prev)
		}
		prev = id
	}
}
