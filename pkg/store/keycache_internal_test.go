package store

import (
	"strconv"
	"testing"
	"time"
)

// TestTheKeyCacheNeverKeepsWhatARevocationOvertook covers the races the
// listener cannot: a read that began before a revocation, or before the
// listener was lost, must not be remembered after it.
func TestTheKeyCacheNeverKeepsWhatARevocationOvertook(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	key := &APIKey{ID: "key_1", Hash: "h1"}
	live := func() *keyCache { c := newKeyCache(); c.setLive(true); return c }

	t.Run("a key read while live is remembered", func(t *testing.T) {
		c := live()
		c.put(key, c.generation(), now)
		if _, ok := c.get("h1", now); !ok {
			t.Fatal("not remembered")
		}
	})
	t.Run("nothing is remembered while revocations go unheard", func(t *testing.T) {
		c := newKeyCache()
		c.put(key, c.generation(), now)
		if _, ok := c.get("h1", now); ok {
			t.Fatal("remembered without a listener")
		}
	})
	t.Run("a read older than a revocation is not remembered", func(t *testing.T) {
		c := live()
		gen := c.generation()
		c.drop("key_other") // any revocation: the read may predate it
		c.put(key, gen, now)
		if _, ok := c.get("h1", now); ok {
			t.Fatal("a read older than a revocation was remembered")
		}
	})
	t.Run("a read older than a lost listener is not remembered", func(t *testing.T) {
		c := live()
		gen := c.generation()
		c.setLive(false)
		c.setLive(true)
		c.put(key, gen, now)
		if _, ok := c.get("h1", now); ok {
			t.Fatal("a read older than a reconnect was remembered")
		}
	})
	t.Run("a revocation forgets the key and a lost listener forgets all", func(t *testing.T) {
		c := live()
		c.put(key, c.generation(), now)
		c.drop("key_1")
		if _, ok := c.get("h1", now); ok {
			t.Fatal("a revoked key is remembered")
		}
		c.put(key, c.generation(), now)
		c.setLive(false)
		c.setLive(true)
		if _, ok := c.get("h1", now); ok {
			t.Fatal("a key is remembered across a lost listener")
		}
	})
	t.Run("a key is read again after a minute", func(t *testing.T) {
		c := live()
		c.put(key, c.generation(), now)
		if _, ok := c.get("h1", now.Add(keyCacheTTL+time.Second)); ok {
			t.Fatal("remembered past its time")
		}
	})
	t.Run("a recorded use shows in the remembered key", func(t *testing.T) {
		c := live()
		c.put(key, c.generation(), now)
		c.touched("key_1", now)
		if k, _ := c.get("h1", now); k == nil || k.LastUsedAt == nil || !k.LastUsedAt.Equal(now) {
			t.Fatalf("remembered %+v", k)
		}
	})
	t.Run("a full cache makes room", func(t *testing.T) {
		c := live()
		for i := range keyCacheSize + 10 {
			c.put(&APIKey{ID: "key_" + strconv.Itoa(i), Hash: "h" + strconv.Itoa(i)}, c.generation(), now)
		}
		if len(c.byHash) > keyCacheSize || len(c.hashOf) != len(c.byHash) {
			t.Fatalf("%d keys, %d ids", len(c.byHash), len(c.hashOf))
		}
	})
}
