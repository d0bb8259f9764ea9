package dialog

import (
	"fmt"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/llm"
)

func TestHistoryCache(t *testing.T) {
	t.Parallel()
	msgs := func(text string) []agent.Message {
		return []agent.Message{{Kind: agent.KindUser, Message: llm.UserText(text)}}
	}
	one := historySize(msgs("x"))
	t.Run("an entry is taken once, with the last_seq it was stored with", func(t *testing.T) {
		c := newHistoryCache(100 * one)
		c.put("t1", "d1", 4, msgs("hello"))
		if got, ok := c.take("t1", "d1", 4); !ok || got[0].Text() != "hello" {
			t.Fatalf("took %v, %v", got, ok)
		}
		if _, ok := c.take("t1", "d1", 4); ok {
			t.Fatal("taken twice")
		}
	})
	t.Run("a dialog written since, or asked for by another tenant, misses", func(t *testing.T) {
		c := newHistoryCache(100 * one)
		c.put("t1", "d1", 4, msgs("hello"))
		if _, ok := c.take("t1", "d1", 5); ok {
			t.Fatal("a stale history was used")
		}
		c.put("t1", "d1", 4, msgs("hello"))
		if _, ok := c.take("t2", "d1", 4); ok {
			t.Fatal("another tenant got the history")
		}
		if c.size != 0 || len(c.entries) != 0 {
			t.Fatalf("a miss left size %d, %d entries", c.size, len(c.entries))
		}
	})
	t.Run("the least recently stored go first once the bound is passed", func(t *testing.T) {
		c := newHistoryCache(8 * one)
		for i := range 9 {
			c.put("t1", fmt.Sprint("d", i), 1, msgs("x"))
		}
		if _, ok := c.take("t1", "d0", 1); ok {
			t.Fatal("the oldest was kept past the bound")
		}
		if _, ok := c.take("t1", "d8", 1); !ok {
			t.Fatal("the newest was evicted")
		}
		if c.size > 8*one {
			t.Fatalf("size %d past the bound %d", c.size, 8*one)
		}
	})
	t.Run("one long conversation does not push out every other", func(t *testing.T) {
		c := newHistoryCache(8 * one)
		c.put("t1", "d1", 1, msgs("x"))
		c.put("t1", "big", 1, msgs(strings.Repeat("x", 4*one)))
		if _, ok := c.take("t1", "d1", 1); !ok {
			t.Fatal("a small history was evicted for a huge one")
		}
	})
	t.Run("a negative bound keeps nothing", func(t *testing.T) {
		c := newHistoryCache(-1)
		c.put("t1", "d1", 1, msgs("x"))
		if _, ok := c.take("t1", "d1", 1); ok {
			t.Fatal("kept")
		}
	})
}
