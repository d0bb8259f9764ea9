package dialog

import (
	"container/list"
	"sync"
	"unsafe"

	"github.com/parleyhq/parley/pkg/agent"
)

// defaultHistoryCacheBytes bounds the memory of the history cache when
// Options leaves it unset.
const defaultHistoryCacheBytes = 32 << 20

// historyCache keeps the messages of dialogs this process answered last,
// so that a dialog's next turn neither reads nor decodes its whole history:
// without it a turn's cost grows with the conversation.
//
// An entry is valid while the dialog's last_seq is the one it was stored
// with. Every message written to a dialog takes the next seq, so a turn
// answered by another process, a text stored for a human, or anything
// else appended makes the entry stale. What changes a row without a new
// seq only ever completes a queued or streaming row, and the runtime
// stores an entry only when the dialog has neither (dialogRun.remember).
//
// A run takes its dialog's entry out and puts the grown history back when
// it ends, so a live run and the cache never share a slice, and a run
// that fails simply leaves none behind. Entries are evicted least recently
// used first once their estimated size passes max bytes.
type historyCache struct {
	mu      sync.Mutex
	max     int
	size    int
	order   *list.List // of *historyEntry, most recently put first
	entries map[string]*list.Element
}

type historyEntry struct {
	dialogID, tenantID string
	lastSeq            int64
	messages           []agent.Message
	size               int
}

func newHistoryCache(maxBytes int) *historyCache {
	return &historyCache{max: maxBytes, order: list.New(), entries: map[string]*list.Element{}}
}

// take removes and returns the tenant's dialog's history when it was
// stored with lastSeq, the dialog's current last_seq.
func (c *historyCache) take(tenantID, dialogID string, lastSeq int64) ([]agent.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[dialogID]
	if !ok {
		return nil, false
	}
	c.remove(el)
	e := el.Value.(*historyEntry)
	if e.tenantID != tenantID || e.lastSeq != lastSeq {
		return nil, false
	}
	return e.messages, true
}

// put stores the tenant's dialog's complete messages, which are all of its
// rows up to lastSeq but interrupted ones.
func (c *historyCache) put(tenantID, dialogID string, lastSeq int64, messages []agent.Message) {
	e := &historyEntry{dialogID: dialogID, tenantID: tenantID, lastSeq: lastSeq, messages: messages, size: historySize(messages)}
	if e.size > c.max/4 {
		return // one long conversation must not push out every other
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[dialogID]; ok {
		c.remove(el)
	}
	c.entries[dialogID] = c.order.PushFront(e)
	c.size += e.size
	for c.size > c.max {
		c.remove(c.order.Back())
	}
}

// forget drops the tenant's dialog's history, as the dialog is deleted.
func (c *historyCache) forget(tenantID, dialogID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[dialogID]; ok && el.Value.(*historyEntry).tenantID == tenantID {
		c.remove(el)
	}
}

// remove drops an entry. Call with mu held.
func (c *historyCache) remove(el *list.Element) {
	e := el.Value.(*historyEntry)
	c.order.Remove(el)
	delete(c.entries, e.dialogID)
	c.size -= e.size
}

// historySize estimates the memory messages hold: their structs and the
// text they point to.
func historySize(messages []agent.Message) int {
	n := cap(messages) * int(unsafe.Sizeof(agent.Message{}))
	for i := range messages {
		for _, b := range messages[i].Content {
			n += int(unsafe.Sizeof(b)) + len(b.Text)
			if b.ToolUse != nil {
				n += len(b.ToolUse.ID) + len(b.ToolUse.Name) + len(b.ToolUse.Arguments)
			}
			if b.ToolResult != nil {
				n += len(b.ToolResult.ToolUseID) + len(b.ToolResult.Name) + len(b.ToolResult.Content)
			}
		}
	}
	return n
}
