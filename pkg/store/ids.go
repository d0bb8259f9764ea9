package store

import (
	"crypto/rand"
	"encoding/base32"
	"encoding/binary"
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
func NewID(prefix string) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	if _, err := rand.Read(b[6:]); err != nil {
		panic("store: crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	return prefix + "_" + idEncoding.EncodeToString(b[:])
}
