package main

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestTheGCTargetFollowsTheLiveHeap: a small live heap gets gcHeadroom to
// grow into, a large one Go's default.
func TestTheGCTargetFollowsTheLiveHeap(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 1600}, // before the first collection
		{4 << 20, 1600},
		{8 << 20, 800},
		{32 << 20, 200},
		{64 << 20, 100},
		{1 << 30, 100},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// TestServeTunesTheGCUnlessGOGCIsSet: the server's own process gets room
// to grow, and an operator's GOGC wins.
func TestServeTunesTheGCUnlessGOGCIsSet(t *testing.T) {
	prev := debug.SetGCPercent(defaultGCPercent)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
	tune := func() int {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		debug.SetGCPercent(defaultGCPercent)
		runtime.GC() // this test process's live heap is far below gcHeadroom
		tuneGC(ctx)
		return debug.SetGCPercent(defaultGCPercent)
	}
	t.Run("unset", func(t *testing.T) {
		t.Setenv("GOGC", "")
		os.Unsetenv("GOGC")
		if got := tune(); got <= defaultGCPercent {
			t.Fatalf("GOGC is %d after tuning a small heap, want more than %d", got, defaultGCPercent)
		}
	})
	t.Run("set", func(t *testing.T) {
		t.Setenv("GOGC", "100")
		if got := tune(); got != defaultGCPercent {
			t.Fatalf("GOGC is %d, want the operator's %d", got, defaultGCPercent)
		}
	})
}
