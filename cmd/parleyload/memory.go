package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
)

// memory is what the server holds per idle open event stream.
type memory struct {
	Streams int `json:"streams"`
	// Before and After are the server's own gauges, from /metrics.
	Before gauges `json:"before"`
	After  gauges `json:"after"`
	// PerStreamKiB is the growth of heap in use plus goroutine stacks per
	// stream; PerStreamRSSKiB the growth of the resident set per stream.
	PerStreamKiB    float64 `json:"per_stream_kib"`
	PerStreamRSSKiB float64 `json:"per_stream_rss_kib"`
	// PerStreamHeapKiB and PerStreamStackKiB split PerStreamKiB, since
	// they shrink by different means: fewer or smaller objects held, or
	// shallower goroutines (a stack doubles past 16 KiB) and fewer of them.
	PerStreamHeapKiB  float64 `json:"per_stream_heap_kib"`
	PerStreamStackKiB float64 `json:"per_stream_stack_kib"`
	GoroutinesPer     float64 `json:"goroutines_per_stream"`
}

// gauges are the server's memory series of interest.
type gauges struct {
	HeapInuse  float64 `json:"heap_inuse_bytes"`
	StackInuse float64 `json:"stack_inuse_bytes"`
	RSS        float64 `json:"rss_bytes"`
	Goroutines float64 `json:"goroutines"`
}

// settle is how long the server is left alone before a sample, so
// connections and the stream's first events are done.
const settle = 2 * time.Second

// idleStreams opens k event streams whose model reply the fake holds back,
// and compares the server's memory before and after. The streams are
// released and drained before it returns.
func idleStreams(ctx context.Context, s *session, f *fakeLLM, metricsURL string, k int) (memory, error) {
	m := memory{Streams: k}
	dialogs := make([]dialogRef, k)
	for i := range dialogs {
		d, err := s.newDialog(ctx)
		if err != nil {
			return m, err
		}
		dialogs[i] = d
	}
	// One finished turn first, so lazily built parts (pools, caches) are
	// in the baseline, not counted against the streams.
	if err := s.send(ctx, modeSSE, dialogs[0], "warm up"); err != nil {
		return m, fmt.Errorf("warm-up turn: %w", err)
	}
	time.Sleep(settle)
	var err error
	if m.Before, err = scrape(ctx, metricsURL); err != nil {
		return m, err
	}
	var wg sync.WaitGroup
	errs := make(chan error, k)
	for _, d := range dialogs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last apiclient.Event
			err := d.client.StreamMessage(ctx, s.tenant, d.ID, holdPrefix+"keep this stream open", "", func(e apiclient.Event) error {
				last = e
				return nil
			})
			if err == nil && last.Type != "done" {
				err = fmt.Errorf("held stream ended with %q: %s", last.Type, last.Data)
			}
			errs <- err
		}()
	}
	defer func() {
		f.releaseHeld()
		wg.Wait()
	}()
	waitCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := f.waitHeld(waitCtx, k); err != nil {
		return m, err
	}
	time.Sleep(settle)
	if m.After, err = scrape(ctx, metricsURL); err != nil {
		return m, err
	}
	f.releaseHeld()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return m, fmt.Errorf("held stream: %w", err)
		}
	}
	n := float64(k)
	m.PerStreamHeapKiB = (m.After.HeapInuse - m.Before.HeapInuse) / n / 1024
	m.PerStreamStackKiB = (m.After.StackInuse - m.Before.StackInuse) / n / 1024
	m.PerStreamKiB = m.PerStreamHeapKiB + m.PerStreamStackKiB
	m.PerStreamRSSKiB = (m.After.RSS - m.Before.RSS) / n / 1024
	m.GoroutinesPer = (m.After.Goroutines - m.Before.Goroutines) / n
	return m, nil
}

// scrape reads the server's Go and process gauges from /metrics.
func scrape(ctx context.Context, url string) (gauges, error) {
	var g gauges
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return g, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return g, fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return g, fmt.Errorf("scrape %s: status %d", url, resp.StatusCode)
	}
	want := map[string]*float64{"go_memstats_heap_inuse_bytes": &g.HeapInuse, "go_memstats_stack_inuse_bytes": &g.StackInuse,
		"process_resident_memory_bytes": &g.RSS, "go_goroutines": &g.Goroutines}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	found := 0
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if dst := want[name]; ok && dst != nil {
			if *dst, err = strconv.ParseFloat(strings.TrimSpace(value), 64); err != nil {
				return g, fmt.Errorf("scrape %s: %s: %w", url, name, err)
			}
			found++
		}
	}
	if err := sc.Err(); err != nil {
		return g, fmt.Errorf("scrape %s: %w", url, err)
	}
	if found < len(want) {
		return g, errors.New("scrape " + url + ": the server exports no Go and process collectors")
	}
	return g, nil
}
