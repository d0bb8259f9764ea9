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
// bits. Ids made later sort after ids made earlier, which is what cursor
// paging relies on for a stable, chronological order, and what orders a
// dialog's webhook events: within one millisecond an id this process made
// is the one before it plus one (as monotonic ULIDs do), so two ids of the
// same process never sort against the order they were made in.
func NewID(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("store: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	lastID.Lock()
	if bytes.Compare(b[:6], lastID.b[:6]) <= 0 { // same millisecond, or the clock stepped back
		b = lastID.b
		for i := len(b) - 1; i >= 6; i-- { // 80 random bits do not run out within a millisecond
			b[i]++
			if b[i] != 0 {
				break
			}
		}
	}
	lastID.b = b
	lastID.Unlock()
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// lastID is the last id NewID made.
var lastID struct {
	sync.Mutex
	b [16]byte
}
