// Package worker runs the loop that works a queue kept in the database:
// claim what is due, work each claimed item in its own goroutine, and
// claim again when a slot is free, the queue was full, a poll comes due or
// the process itself queued something. The webhook outbox and the channel
// job queue both run on it; what a claim and a piece of work are is theirs.
package worker

import (
	"context"
	"sync"
	"time"
)

// Pool works a queue. Claim, Key and Work are required; Poll and
// Concurrency must be positive.
type Pool[T any] struct {
	// Claim claims up to n due items for this process, leaving out those
	// whose keys are in skip (in flight here, from a claim that lapsed).
	Claim func(ctx context.Context, n int, skip []string) ([]T, error)
	// Key names an item, to know it in flight.
	Key func(T) string
	// Work does one claimed item; ctx is Run's.
	Work func(ctx context.Context, item T)
	// ClaimFailed is told a claim's error (not one cut by ctx ending).
	ClaimFailed func(error)
	// Poll is how long an idle pool waits before claiming again, for what
	// other processes queued; Wake, when it receives, cuts the wait short.
	Poll time.Duration
	Wake <-chan struct{}
	// Concurrency bounds the items worked at once.
	Concurrency int

	wg       sync.WaitGroup
	mu       sync.Mutex
	inFlight map[string]bool
	claiming int
}

// Run claims and works until ctx ends; it does not wait for the work in
// flight (Wait does).
func (p *Pool[T]) Run(ctx context.Context) {
	slots := make(chan struct{}, p.Concurrency)
	freed := make(chan struct{}, 1)
	timer := time.NewTimer(p.Poll)
	defer timer.Stop()
	for ctx.Err() == nil {
		free := cap(slots) - len(slots)
		if free == 0 {
			select { // every slot busy: claim again when one comes free
			case <-ctx.Done():
			case <-freed:
			}
			continue
		}
		items, err := p.claim(ctx, free)
		if err != nil && ctx.Err() == nil && p.ClaimFailed != nil {
			p.ClaimFailed(err)
		}
		for _, item := range items {
			slots <- struct{}{}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				p.Work(ctx, item)
				p.mu.Lock()
				delete(p.inFlight, p.Key(item))
				p.mu.Unlock()
				<-slots
				select {
				case freed <- struct{}{}:
				default:
				}
			}()
		}
		if err == nil && len(items) == free {
			continue // more may be due
		}
		timer.Reset(p.Poll)
		select { // the queue is empty: wait for a poll or a wake
		case <-ctx.Done():
		case <-timer.C:
		case <-p.Wake:
		}
	}
}

func (p *Pool[T]) claim(ctx context.Context, n int) ([]T, error) {
	p.mu.Lock()
	if p.inFlight == nil {
		p.inFlight = map[string]bool{}
	}
	p.claiming++ // Busy must not miss an item claimed and not yet in flight
	skip := make([]string, 0, len(p.inFlight))
	for key := range p.inFlight {
		skip = append(skip, key)
	}
	p.mu.Unlock()
	items, err := p.Claim(ctx, n, skip)
	p.mu.Lock()
	p.claiming--
	for _, item := range items {
		p.inFlight[p.Key(item)] = true
	}
	p.mu.Unlock()
	return items, err
}

// Busy says whether the pool is claiming or working an item.
func (p *Pool[T]) Busy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.claiming > 0 || len(p.inFlight) > 0
}

// Wait waits for the work in flight.
func (p *Pool[T]) Wait() { p.wg.Wait() }
