package main

import (
	"slices"
	"time"
)

// latency summarises one set of timings in milliseconds.
type latency struct {
	P50 float64 `json:"p50_ms"`
	P90 float64 `json:"p90_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
}

// summarize returns the nearest-rank percentiles of ds; it sorts ds.
func summarize(ds []time.Duration) latency {
	if len(ds) == 0 {
		return latency{}
	}
	slices.Sort(ds)
	return latency{P50: ms(percentile(ds, 50)), P90: ms(percentile(ds, 90)), P99: ms(percentile(ds, 99)), Max: ms(ds[len(ds)-1])}
}

// percentile is the nearest-rank percentile p of sorted ds: the smallest
// value with at least p% of the values at or below it.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
