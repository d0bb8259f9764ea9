package main

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// printResults writes the results as the table the README quotes, or, for
// -sweep, one short row per level and the ratios.
func printResults(w io.Writer, r results) {
	redis := ""
	if r.Redis {
		redis = ", limits shared through Redis"
	}
	fmt.Fprintf(w, "machine: %d CPUs, %s, %s, load average %s; database: %s, %d server(s)%s\n\n",
		r.Machine.CPUs, r.Machine.CPU, r.Machine.GoVersion, r.Machine.LoadAvg, r.Database, r.Servers, redis)
	if r.Sweep != nil {
		printSweep(w, r)
	} else {
		printLevels(w, r)
	}
	for _, l := range r.Levels {
		if l.FirstError != "" {
			fmt.Fprintf(w, "first error at %s x%d: %s\n", l.Mode, l.Concurrency, l.FirstError)
		}
	}
	if m := r.Memory; m != nil {
		fmt.Fprintf(w, "\n%d idle event streams: %.1f KiB of heap and stacks each (heap %.1f, stacks %.1f; RSS %.1f KiB), %.1f goroutines each\n",
			m.Streams, m.PerStreamKiB, m.PerStreamHeapKiB, m.PerStreamStackKiB, m.PerStreamRSSKiB, m.GoroutinesPer)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// printLevels writes every level with its percentiles.
func printLevels(w io.Writer, r results) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tdialogs\tthink ms\tturns/s\tp50 ms\tp90 ms\tp99 ms\tmodel p50\tmodel p99\tadded p50\tadded p99\terrors\tserver CPU ms/turn\tswitches/turn\t")
	for _, l := range r.Levels {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\t%d\t%s\t\n", l.Mode, l.Concurrency, l.ThinkMS, l.TurnsPerSec,
			l.Turn.P50, l.Turn.P90, l.Turn.P99, l.Provider.P50, l.Provider.P99, l.Added.P50, l.Added.P99, l.Errors, l.Server.columns())
	}
	tw.Flush()
}
