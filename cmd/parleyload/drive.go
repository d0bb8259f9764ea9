package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"
)

// The two ways a turn is answered.
const (
	modeJSON = "json"
	modeSSE  = "sse"
)

// level is one measured run: a mode at a concurrency.
type level struct {
	Mode        string  `json:"mode"`
	Concurrency int     `json:"concurrency"`
	ThinkMS     float64 `json:"think_ms"`
	Turns       int     `json:"turns"`
	Errors      int     `json:"errors"`
	FirstError  string  `json:"first_error,omitempty"`
	Seconds     float64 `json:"seconds"`
	TurnsPerSec float64 `json:"turns_per_sec"`
	Turn        latency `json:"turn"`
	// Provider is a raw model call to the same fake at the same
	// concurrency; Added is Turn minus Provider at each percentile.
	Provider latency `json:"provider"`
	Added    latency `json:"added"`
	// Server is what the turns cost the started servers (usage.go); nil
	// for -server.
	Server *serverCost `json:"server,omitempty"`
}

// driveOptions shape a run.
type driveOptions struct {
	Mode           string
	Concurrency    int
	Duration       time.Duration
	TurnsPerDialog int
	// Think is how long on average a worker pauses after each answer, as
	// a person reading it would: 0 drives the server flat out (its
	// throughput), more measures latency at a load it keeps up with.
	Think time.Duration
	// Slow, when set, writes each answered turn that takes longer to Log,
	// with the time it started, to match a stall against a database's log.
	Slow time.Duration
	Log  io.Writer
}

// drive runs o.Concurrency dialogs at once for o.Duration, each worker
// sending a message once the last one is answered and it has thought for
// o.Think (its first message too, so paced workers do not start in
// lockstep), and moving to a new dialog every TurnsPerDialog turns.
func drive(ctx context.Context, s *session, o driveOptions) level {
	var (
		mu    sync.Mutex
		lats  []time.Duration
		errs  int
		first string
		wg    sync.WaitGroup
	)
	record := func(d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			errs++
			if first == "" {
				first = err.Error()
			}
			return
		}
		lats = append(lats, d)
	}
	start := time.Now()
	deadline := start.Add(o.Duration)
	for w := range o.Concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dialog dialogRef
			n := 0
			think(o.Think) // people do not all press send in the same millisecond
			for time.Now().Before(deadline) && ctx.Err() == nil {
				if dialog.ID == "" || n == o.TurnsPerDialog {
					var err error
					if dialog, err = s.newDialog(ctx); err != nil {
						record(0, err)
						continue
					}
					n = 0
				}
				n++
				t0 := time.Now()
				err := s.send(ctx, o.Mode, dialog, fmt.Sprintf("Worker %d, message %d: where is my order?", w, n))
				took := time.Since(t0)
				record(took, err)
				if o.Slow > 0 && took > o.Slow && err == nil {
					fmt.Fprintf(o.Log, "slow turn: started %s, took %.1f ms (worker %d, message %d)\n",
						t0.UTC().Format("15:04:05.000"), ms(took), w, n)
				}
				if err != nil {
					dialog = dialogRef{} // whatever state it is in, do not build on it
				}
				think(o.Think)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	return level{Mode: o.Mode, Concurrency: o.Concurrency, ThinkMS: ms(o.Think), Turns: len(lats), Errors: errs, FirstError: first,
		Seconds: took.Seconds(), TurnsPerSec: float64(len(lats)) / took.Seconds(), Turn: summarize(lats)}
}

// withProvider sets the provider timings and what the turn adds to them.
func (l *level) withProvider(p latency) {
	l.Provider = p
	l.Added = latency{P50: l.Turn.P50 - p.P50, P90: l.Turn.P90 - p.P90, P99: l.Turn.P99 - p.P99, Max: l.Turn.Max - p.Max}
}

// think pauses a worker after an answer for a time uniform on
// [0, 2*mean): the mean is mean, and the workers drift apart instead of
// sending in lockstep. A zero mean does not pause.
func think(mean time.Duration) {
	if mean > 0 {
		time.Sleep(time.Duration(rand.Int64N(int64(2 * mean))))
	}
}
