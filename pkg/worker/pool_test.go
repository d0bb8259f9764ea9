package worker

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestAPoolWorksEachItemOnceAndNeverClaimsWhatItHolds runs a pool over a
// queue whose claims, like the database's after a lease lapses, would hand
// out an item again: the pool must skip what it holds, work every item
// once, wait for its work, and say when it is idle.
func TestAPoolWorksEachItemOnceAndNeverClaimsWhatItHolds(t *testing.T) {
	var mu sync.Mutex
	due := []string{"a", "b", "c", "d", "e"}
	worked := map[string]int{}
	release := make(chan struct{})
	wake := make(chan struct{}, 1)
	p := &Pool[string]{
		Claim: func(_ context.Context, n int, skip []string) ([]string, error) {
			mu.Lock()
			defer mu.Unlock()
			var out []string
			for _, id := range due { // nothing leaves the queue until worked
				if len(out) < n && !slices.Contains(skip, id) {
					out = append(out, id)
				}
			}
			return out, nil
		},
		Key: func(id string) string { return id },
		Work: func(_ context.Context, id string) {
			<-release
			mu.Lock()
			defer mu.Unlock()
			worked[id]++
			due = slices.DeleteFunc(due, func(d string) bool { return d == id })
		},
		Poll:        time.Hour, // only wakes and freed slots move it
		Wake:        wake,
		Concurrency: 2,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		left := len(due)
		mu.Unlock()
		if left == 0 && !p.Busy() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d items left, worked %v", left, worked)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	p.Wait()
	for _, id := range []string{"a", "b", "c", "d", "e"} {
		if worked[id] != 1 {
			t.Errorf("item %s worked %d times, want once", id, worked[id])
		}
	}
}
