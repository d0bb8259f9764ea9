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
// bits. Ids of one process sort in the order they were made, which cursor
// paging, the outbox (a dialog's webhook events go out in id order) and
// the audit log rely on: within a millisecond an id is the one before it
// plus a random step of 56 bits. The step keeps ids unguessable from each
// other, as they must be: a dialog's id is all an anonymous visitor holds.
func NewID(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("store: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	lastID.Lock()
	defer lastID.Unlock()
	if bytes.Compare(b[:6], lastID.b[:6]) <= 0 { // same millisecond, or the clock stepped back
		step := binary.BigEndian.Uint64(b[8:])>>8 | 1 // 56 random bits
		b = lastID.b
		low := binary.BigEndian.Uint64(b[8:])
		binary.BigEndian.PutUint64(b[8:], low+step)
		for i := 7; low+step < low && i >= 0; i-- { // carry
			if b[i]++; b[i] != 0 {
				break
			}
		}
	}
	lastID.b = b
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}

// lastID is the last id NewID made.
var lastID struct {
	sync.Mutex
	b [16]byte
}
