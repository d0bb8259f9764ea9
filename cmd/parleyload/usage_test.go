package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestUsageCountsTheSwitchesOfEveryThread: a server switches on all its
// threads, and the process's own status counts its first one's only.
func TestUsageCountsTheSwitchesOfEveryThread(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("usage is read from Linux's /proc")
	}
	pid := os.Getpid()
	const rounds = 200
	itsOwn := make(chan int64, 1)
	onAnotherThread(pid, func() {
		// A thread that sleeps in the kernel gives up its CPU: a
		// voluntary switch each time.
		for range rounds {
			_ = syscall.Nanosleep(&syscall.Timespec{Nsec: 1000}, nil)
		}
		status, err := os.ReadFile("/proc/thread-self/status")
		if err != nil {
			t.Error(err)
		}
		itsOwn <- statusField(status, "voluntary_ctxt_switches:")
	})
	thread := <-itsOwn
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	first := statusField(status, "voluntary_ctxt_switches:") + statusField(status, "nonvoluntary_ctxt_switches:")
	u, err := processUsage(pid)
	if err != nil {
		t.Fatal(err)
	}
	if thread < rounds {
		t.Fatalf("the thread switched %d times in %d sleeps; want one a sleep at least", thread, rounds)
	}
	if u.switches < first+thread {
		t.Fatalf("the process switched %d times: less than its first thread's %d and another's %d", u.switches, first, thread)
	}
}

// onAnotherThread runs fn in a goroutine locked to a thread other than
// the process's first, whose switches /proc/PID/status alone counts.
func onAnotherThread(pid int, fn func()) {
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread() // the thread lives on, with its counts
		if syscall.Gettid() != pid {
			fn()
			return
		}
		// Hold the first thread until fn is done, so the goroutine that
		// locks one next gets another.
		done := make(chan struct{})
		onAnotherThread(pid, func() { fn(); close(done) })
		<-done
	}()
}

// TestUsageReadsTheProcesssCPUTime: the ticks are the process's user and
// system time, as getrusage counts them (to a tick each way).
func TestUsageReadsTheProcesssCPUTime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("usage is read from Linux's /proc")
	}
	pid := os.Getpid()
	before, err := processUsage(pid)
	if err != nil {
		t.Fatal(err)
	}
	// Spend a few ticks, in the kernel too (reading /proc): only the
	// kernel's count says when.
	var u usage
	for u.cpuTicks < before.cpuTicks+5 {
		if u, err = processUsage(pid); err != nil {
			t.Fatal(err)
		}
	}
	cpu := func() time.Duration {
		var r syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
			t.Fatal(err)
		}
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	low := cpu()
	if u, err = processUsage(pid); err != nil {
		t.Fatal(err)
	}
	high := cpu()
	const tick = time.Second / clockTicks
	if got := time.Duration(u.cpuTicks) * tick; got < low-2*tick || got > high+2*tick {
		t.Fatalf("/proc says %v of CPU, getrusage %v to %v", got, low, high)
	}
	if _, ok := processesUsage([]int{pid, 1 << 30}); ok {
		t.Error("a process that is not there was counted")
	}
	if _, ok := processesUsage(nil); ok {
		t.Error("no processes were counted as measured")
	}
}

func TestPerTurnDividesWhatTheServersSpentByTheTurns(t *testing.T) {
	got := perTurn(usage{cpuTicks: 1000, switches: 500}, usage{cpuTicks: 1150, switches: 4500}, 1000)
	if got == nil || got.CPUMS != 1.5 || got.Switches != 4 {
		t.Fatalf("150 ticks and 4,000 switches over 1,000 turns: %+v; want 1.5 ms and 4 a turn", got)
	}
	if perTurn(usage{}, usage{cpuTicks: 5}, 0) != nil {
		t.Error("a level without turns has a cost per turn")
	}
}

// TestEveryLevelReportsWhatItsTurnsCostTheServers: with the servers'
// processes known, each level says what its turns cost them, in the JSON
// and in the table; a server parleyload did not start shows dashes.
func TestEveryLevelReportsWhatItsTurnsCostTheServers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("usage is read from Linux's /proc")
	}
	f := startTestFake(t)
	tg := inProcess(t, f)
	tg.pids = []int{os.Getpid()} // the server runs in this process
	start := func(context.Context, string, int) (*target, error) { return tg, nil }
	c := config{Concurrency: []int{2}, Modes: []string{modeJSON}, Duration: 300 * time.Millisecond, TurnsPerDialog: 3, Sweep: true}
	levels, err := measureTurns(context.Background(), c, start, f, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	l := levels[0]
	if l.Turns == 0 || l.Server == nil || l.Server.CPUMS <= 0 || l.Server.Switches <= 0 {
		t.Fatalf("%d turns, cost %+v; want CPU and switches per turn", l.Turns, l.Server)
	}
	var out bytes.Buffer
	unmeasured := l
	unmeasured.Server = nil
	printResults(&out, results{Levels: []level{l, unmeasured}, Sweep: []sweepRatio{}})
	lines := strings.Split(out.String(), "\n")
	last2 := func(line string) string { f := strings.Fields(line); return strings.Join(f[max(0, len(f)-2):], " ") }
	want := fmt.Sprintf("%.2f %.1f", l.Server.CPUMS, l.Server.Switches)
	if !strings.HasSuffix(lines[2], "server CPU ms/turn  switches/turn") || last2(lines[3]) != want || last2(lines[4]) != "- -" {
		t.Fatalf("the table:\n%s\nwant %q for the first level and dashes for the second", out.String(), want)
	}
}
