package main

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcHeadroom is the least the heap may grow between two garbage
// collections. Go's default lets it grow by as much as is live, and a
// server's live heap is small: about 5 MB while it answers 100 turns a
// second, which it then collected twice a second. A collection took about
// 2 ms and 3 ms of CPU out of two cores, and the turns it met were the
// slowest in a hundred (paced PostgreSQL runs, README "Performance": added
// p99 3.3–3.8 ms with room to grow, 3.8–4.4 ms without). Beyond this much
// live heap Go's default applies, so the extra memory is bounded by this
// constant, not proportional to the load.
const gcHeadroom = 64 << 20

// gcRetune is how often the GC target follows the live heap. Between two
// looks the heap outgrows its target by at most gcHeadroom, which is what
// the target was anyway.
const gcRetune = time.Second

// defaultGCPercent is Go's own GOGC.
const defaultGCPercent = 100

// tuneGC keeps at least gcHeadroom of growth between collections until
// ctx ends. GOGC set in the environment is the operator's choice, and left
// alone; GOMEMLIMIT still caps the heap either way.
func tuneGC(ctx context.Context) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	percent := defaultGCPercent
	retune := func() {
		metrics.Read(live)
		if p := gcPercent(live[0].Value.Uint64()); p != percent {
			debug.SetGCPercent(p)
			percent = p
		}
	}
	retune()
	go func() {
		t := time.NewTicker(gcRetune)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				retune()
			}
		}
	}()
}

// gcPercent is the GOGC that lets a heap with live bytes grow by
// gcHeadroom, or by Go's default where that is more. Before the first
// collection the live heap reads 0; Go's smallest heap target, 4 MB,
// stands in for it.
func gcPercent(live uint64) int {
	const minLive = 4 << 20
	live = max(live, minLive)
	return max(defaultGCPercent, int(gcHeadroom*100/live))
}
