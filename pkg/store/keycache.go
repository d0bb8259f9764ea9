package store

import (
	"sync"
	"time"
)

// keyCacheTTL bounds how long a key is trusted without reading it again.
// Parley's own revocations reach every process at once (see keyListener);
// the bound is for a key revoked behind Parley's back, by a manual UPDATE.
const keyCacheTTL = time.Minute

// keyCacheSize bounds the keys a process remembers.
const keyCacheSize = 10000

// keyCache remembers the API keys requests authenticated with, so a
// request's first statement is not the read of its key: the last of a
// warm turn's reads, on the path of every chat message. It answers only
// while every revocation is heard (live): on PostgreSQL while a listener
// listens, on SQLite while the store is the only server on the file.
// Otherwise every request reads its key.
//
// A nil *keyCache caches nothing.
type keyCache struct {
	mu   sync.Mutex
	live bool
	// gen moves on every revocation and every change of live, so a read
	// that began before one cannot store what it read after it.
	gen    uint64
	byHash map[string]cachedKey
	hashOf map[string]string // key id -> hash
}

type cachedKey struct {
	key   APIKey
	until time.Time
}

func newKeyCache() *keyCache {
	return &keyCache{byHash: map[string]cachedKey{}, hashOf: map[string]string{}}
}

// get returns a copy of the key with this hash, if it is remembered.
func (c *keyCache) get(hash string, now time.Time) (*APIKey, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byHash[hash]
	if !ok || !c.live || now.After(e.until) {
		return nil, false
	}
	k := e.key
	return &k, true
}

// generation is the generation a read starts in; pass it to put.
func (c *keyCache) generation() uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// put remembers k, read in generation gen, unless a revocation or a lost
// listener came since: what was read may be stale already.
func (c *keyCache) put(k *APIKey, gen uint64, now time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live || gen != c.gen {
		return
	}
	if len(c.byHash) >= keyCacheSize {
		for hash, e := range c.byHash { // any one: a full cache is rare
			c.forget(hash, e.key.ID)
			break
		}
	}
	c.byHash[k.Hash] = cachedKey{key: *k, until: now.Add(keyCacheTTL)}
	c.hashOf[k.ID] = k.Hash
}

// drop forgets the key with this id: it was revoked.
func (c *keyCache) drop(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if hash, ok := c.hashOf[id]; ok {
		c.forget(hash, id)
	}
}

// touched records the key's last use, as the store just wrote it.
func (c *keyCache) touched(id string, at time.Time) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byHash[c.hashOf[id]]; ok {
		e.key.LastUsedAt = &at
		c.byHash[e.key.Hash] = e
	}
}

// setLive forgets every key and says whether revocations are heard from
// now on: a listener that was away may have missed some.
func (c *keyCache) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.live = live
	clear(c.byHash)
	clear(c.hashOf)
}

func (c *keyCache) forget(hash, id string) {
	delete(c.byHash, hash)
	delete(c.hashOf, id)
}
