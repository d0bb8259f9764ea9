package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// A level's turns/s moves with whatever else the machine runs; what the
// started servers spent per turn moves far less, and says where a
// difference comes from: more work per turn (CPU) or more waking up and
// falling asleep (context switches, which three processes on shared
// cores pay far more of than one; docs/performance.md).

// serverCost is what one level's turns cost the servers parleyload
// started, all of them together, per answered turn.
type serverCost struct {
	CPUMS    float64 `json:"cpu_ms_per_turn"`
	Switches float64 `json:"switches_per_turn"`
}

// usage is a process's CPU time and context switches so far.
type usage struct {
	cpuTicks int64 // user and system, in clock ticks
	switches int64 // voluntary and involuntary, of every thread
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux architecture Go runs on.
const clockTicks = 100

// processesUsage sums the usage of pids; ok is false where /proc cannot
// tell (not Linux, or a process gone).
func processesUsage(pids []int) (u usage, ok bool) {
	for _, pid := range pids {
		p, err := processUsage(pid)
		if err != nil {
			return usage{}, false
		}
		u.cpuTicks += p.cpuTicks
		u.switches += p.switches
	}
	return u, len(pids) > 0
}

// processUsage reads /proc/PID/stat for the CPU time of the whole process
// and every thread's /proc/PID/task/TID/status for its switches: the
// process's own status counts its first thread's only, and a Go server
// switches on all of them.
func processUsage(pid int) (usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return usage{}, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its closing one, where the third is the state.
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return usage{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := bytes.Fields(stat[end+1:])
	if len(fields) < 13 {
		return usage{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	var u usage
	for _, f := range fields[11:13] { // utime and stime, fields 14 and 15 of stat(5)
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return usage{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
		u.cpuTicks += n
	}
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/status", pid))
	if err != nil || len(tasks) == 0 {
		return usage{}, cmp.Or(err, fmt.Errorf("/proc/%d/task: no threads", pid))
	}
	for _, path := range tasks {
		status, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // the thread ended since the glob
		}
		if err != nil {
			return usage{}, err
		}
		u.switches += statusField(status, "voluntary_ctxt_switches:") + statusField(status, "nonvoluntary_ctxt_switches:")
	}
	return u, nil
}

// statusField is the number after name at the start of a line of a
// /proc status file, 0 when there is none.
func statusField(status []byte, name string) int64 {
	for line := range bytes.Lines(status) {
		if rest, ok := bytes.CutPrefix(line, []byte(name)); ok {
			n, _ := strconv.ParseInt(string(bytes.TrimSpace(rest)), 10, 64)
			return n
		}
	}
	return 0
}

// perTurn is what happened between before and after, per one of turns.
func perTurn(before, after usage, turns int) *serverCost {
	if turns == 0 {
		return nil
	}
	n := float64(turns)
	return &serverCost{
		CPUMS:    float64(after.cpuTicks-before.cpuTicks) * 1000 / clockTicks / n,
		Switches: float64(after.switches-before.switches) / n,
	}
}

// columns is the cost as two tab-separated columns of a report, dashes
// when it was not measured.
func (c *serverCost) columns() string {
	if c == nil {
		return "-\t-"
	}
	return fmt.Sprintf("%.2f\t%.1f", c.CPUMS, c.Switches)
}

// String is the cost as the progress line ends, empty when it was not
// measured.
func (c *serverCost) String() string {
	if c == nil {
		return ""
	}
	return fmt.Sprintf("; servers %.2f ms CPU, %.1f switches a turn", c.CPUMS, c.Switches)
}
