package dialog_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/dialog"
)

// collected is a live stream's events, safe to read while it runs.
type collected struct {
	mu     sync.Mutex
	events []agent.Event
	more   chan struct{}
}

func (c *collected) sink(_ int64, e agent.Event) {
	c.mu.Lock()
	c.events = append(c.events, e)
	c.mu.Unlock()
	select {
	case c.more <- struct{}{}:
	default:
	}
}

// await waits until ok holds for the events so far.
func (c *collected) await(t *testing.T, what string, ok func([]agent.Event) bool) {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		done := ok(c.events)
		c.mu.Unlock()
		if done {
			return
		}
		select {
		case <-c.more:
		case <-timeout:
			t.Fatalf("no %s within 30s: %v", what, c.events)
		}
	}
}

func TestALiveStreamEndsWithTheServerSayingItRestarts(t *testing.T) {
	t.Parallel()
	forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
		d := e.dialog(t)
		c := &collected{more: make(chan struct{}, 1)}
		ended := make(chan error, 1)
		go func() { ended <- e.rt.Follow(context.Background(), e.admin, "shop", d.ID, "", 0, c.sink) }()
		c.await(t, "first status", func(evs []agent.Event) bool { return len(evs) > 0 })
		if err := e.rt.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-ended:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the stream outlived its server's shutdown")
		}
		last, ok := c.events[len(c.events)-1].(agent.Error)
		if !ok || last.Code != dialog.EventServerRestarting || !last.Retryable {
			t.Fatalf("last event %#v, want a retryable %s error", c.events[len(c.events)-1], dialog.EventServerRestarting)
		}
	})
}
