// Package longtest says whether the long test scenarios run: soak runs of
// thousands of events, kill-and-restart loops, real binaries and several
// server processes. `make test` runs a short case of each, so nothing
// goes untested by default; `make test-long` (PARLEY_TEST_LONG=1) runs them
// at full size. See "Running Parley's own tests" in docs/testing.md.
package longtest

import (
	"os"
	"testing"
)

// Env names the variable that turns the long scenarios on.
const Env = "PARLEY_TEST_LONG"

// Enabled says whether this is a long run.
func Enabled() bool { return os.Getenv(Env) == "1" }

// Pick returns long in a long run and short otherwise: the size of a
// scenario, say, or how many times it kills a server.
func Pick[T any](short, long T) T {
	if Enabled() {
		return long
	}
	return short
}

// Skip skips t unless this is a long run; why says what makes it long.
func Skip(t testing.TB, why string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("%s: a long scenario, run by make test-long (%s=1)", why, Env)
	}
}
