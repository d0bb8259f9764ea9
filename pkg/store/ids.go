package store

import (
	"bytes"
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
	"sync"
	"time"
)

// ID prefixes say what an id names, so a key id pasted where a bot id belongs
// fails loudly instead of matching nothing.
const (
	PrefixTenant  = "ten"
	PrefixUser    = "usr"
	PrefixKey     = "key"
	PrefixBot     = "bot"
	PrefixVersion = "ver"
)

// lowercase Crockford-like alphabet in ascending byte order, so ids sort in
// creation order as plain strings.
var idEncoding = base32.NewEncoding("0123456789abcdefghjkmnpqrstvwxyz").WithPadding(base32.NoPadding)

// NewID returns prefix_ followed by a millisecond timestamp and 80 random
// bits. Ids made later sort after ids made earlier (to the millisecond),
// which is what cursor paging relies on for a stable, chronological order.
// Within a millisecond their order is random, and must stay so: a dialog's
// id is all an anonymous visitor holds, so no id may be guessed from
// another.
func NewID(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("store: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// newOrderedID is NewID for rows whose order is their meaning and which
// nobody holds as a secret (webhook events, delivered in id order; audit
// entries, listed newest first): two ids of one process never sort
// against the order they were made in.
// Within a millisecond an id is the one before it plus one, as monotonic
// ULIDs are.
func newOrderedID(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("store: crypto/rand failed: " + err.Error())
	}
	lastOrderedID.Lock()
	if bytes.Compare(b[:6], lastOrderedID.b[:6]) <= 0 { // same millisecond, or the clock stepped back
		b = lastOrderedID.b
		for i := len(b) - 1; i >= 6; i-- { // 80 random bits do not run out within a millisecond
			b[i]++
			if b[i] != 0 {
				break
			}
		}
	}
	lastOrderedID.b = b
	lastOrderedID.Unlock()
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// lastOrderedID is the last id newOrderedID made.
var lastOrderedID struct {
	sync.Mutex
	b [16]byte
}
