package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// sweepRatio says how one mode holds up from Base dialogs at once to Top:
// the turns per second and the added latency at Top over those at Base.
// A server that scales keeps the throughput (a ratio near 1 or above) and
// its latency grows with the queue, not faster.
type sweepRatio struct {
	Mode        string  `json:"mode"`
	Base        int     `json:"base_dialogs"`
	Top         int     `json:"top_dialogs"`
	TurnsPerSec float64 `json:"turns_per_sec_ratio"`
	AddedP50    float64 `json:"added_p50_ratio"`
	AddedP99    float64 `json:"added_p99_ratio"`
}

// sweepRatios compares, per mode, the most dialogs measured with 10 (or
// with the fewest, when 10 was not measured).
func sweepRatios(levels []level) []sweepRatio {
	var out []sweepRatio
	for _, mode := range []string{modeJSON, modeSSE} {
		var of []level
		for _, l := range levels {
			if l.Mode == mode {
				of = append(of, l)
			}
		}
		if len(of) < 2 {
			continue
		}
		byDialogs := func(a, b level) int { return a.Concurrency - b.Concurrency }
		base, top := slices.MinFunc(of, byDialogs), slices.MaxFunc(of, byDialogs)
		if i := slices.IndexFunc(of, func(l level) bool { return l.Concurrency == 10 }); i >= 0 && top.Concurrency > 10 {
			base = of[i]
		}
		out = append(out, sweepRatio{Mode: mode, Base: base.Concurrency, Top: top.Concurrency,
			TurnsPerSec: ratio(top.TurnsPerSec, base.TurnsPerSec),
			AddedP50:    ratio(top.Added.P50, base.Added.P50), AddedP99: ratio(top.Added.P99, base.Added.P99)})
	}
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// printSweep writes one row per level and the ratios.
func printSweep(w io.Writer, r results) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tdialogs\tturns/s\tadded p50 ms\tadded p99 ms\terrors\tserver CPU ms/turn\tswitches/turn\t")
	for _, l := range r.Levels {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.2f\t%.2f\t%d\t%s\t\n", l.Mode, l.Concurrency, l.TurnsPerSec, l.Added.P50, l.Added.P99, l.Errors, l.Server.columns())
	}
	tw.Flush()
	for _, s := range r.Sweep {
		fmt.Fprintf(w, "%s, %d dialogs against %d: turns/s x%.2f, added p50 x%.2f, added p99 x%.2f\n",
			s.Mode, s.Top, s.Base, s.TurnsPerSec, s.AddedP50, s.AddedP99)
	}
}
