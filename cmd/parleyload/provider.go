package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/openai"
)

// providerLatency times raw streamed model calls to the fake, n at a time
// for d with the turns' think time between calls, through the same
// OpenAI-compatible provider the server uses: the share of a turn that
// belongs to the model, not to Parley, measured at the same pace as the
// turns, since a paced call queues less than a flat-out one.
func providerLatency(ctx context.Context, f *fakeLLM, n int, d, pause time.Duration) (latency, error) {
	p, err := openai.New(openai.Config{BaseURL: f.url, APIKey: "fake", MaxRetries: -1,
		HTTPClient: f.httpClient(n)})
	if err != nil {
		return latency{}, err
	}
	// A request the size of a bot's: a prompt of about 2 KB, one tool, a
	// short history.
	req := &llm.Request{Model: "fake-model", System: strings.Repeat("You are Acme's support assistant. ", 60),
		Messages: []llm.Message{llm.UserText("Where is my order?")},
		Tools: []llm.ToolDefinition{{Name: "current_time", Description: "The current time",
			Parameters: llm.EmptyObjectSchema()}}}
	// Warmed up and staggered as the turns are, so neither side's sample
	// holds new connections or a burst the other's does not.
	call := func() error { _, err := p.Stream(ctx, req, func(llm.Delta) {}); return err }
	if _, err := timeCalls(ctx, call, n, min(d/5, 2*time.Second), pause); err != nil {
		return latency{}, err
	}
	lats, err := timeCalls(ctx, call, n, d, pause)
	if err != nil {
		return latency{}, err
	}
	return summarize(lats), nil
}

// timeCalls runs call n at a time for d, pausing for think time pause
// before each, and returns how long each took.
func timeCalls(ctx context.Context, call func() error, n int, d, pause time.Duration) ([]time.Duration, error) {
	var (
		mu      sync.Mutex
		lats    []time.Duration
		failure error
		wg      sync.WaitGroup
	)
	deadline := time.Now().Add(d)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			think(pause)
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				err := call()
				took := time.Since(t0)
				mu.Lock()
				if err != nil && failure == nil {
					failure = err
				}
				lats = append(lats, took)
				mu.Unlock()
				think(pause)
			}
		}()
	}
	wg.Wait()
	if failure != nil {
		return nil, fmt.Errorf("raw model call: %w", failure)
	}
	return lats, nil
}
