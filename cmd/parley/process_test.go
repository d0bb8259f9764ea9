package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/longtest"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
)

// TestMain removes the parley binary the process tests built, if any.
func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// program is what a process test runs as `parley serve`: the real binary
// in a long run, this test binary otherwise (TestHelperServe runs the same
// Main), which saves building and linking the program.
type program struct {
	path string
	args []string
	env  []string
}

// built is the real parley binary, built once for every test that runs it
// as a separate process (linking it is the slow part).
var built struct {
	once      sync.Once
	dir, path string
	err       error
}

// parleyBinary returns the program the process tests run: the real one,
// built with `go build` once per test run, in a long run (make test-long),
// and this test binary as `parley serve` otherwise.
func parleyBinary(t *testing.T) program {
	t.Helper()
	if !longtest.Enabled() {
		return program{path: os.Args[0], args: []string{"-test.run=^TestHelperServe$"}, env: []string{"PARLEY_E2E_CHILD=1"}}
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "parley-bin-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "parley")
		out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return program{path: built.path, args: []string{"serve"}}
}

// process is `parley serve` running as a child process.
type process struct {
	URL    string
	bin    program
	env    parleyEnv
	cmd    *exec.Cmd
	stderr *redacttest.Logs
	exited chan struct{}
}

// startupTimeout bounds how long a child may take to say where it listens.
const startupTimeout = 30 * time.Second

// startProcess runs bin as `parley serve` on a free port with env as its
// only PARLEY_* settings, and waits until it listens. The process is
// killed when t ends.
func startProcess(t *testing.T, bin program, env parleyEnv) *process {
	t.Helper()
	cmd := exec.Command(bin.path, bin.args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARLEY_") && !strings.HasPrefix(kv, "OPENAI_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PARLEY_ADDR=127.0.0.1:0", "PARLEY_LOG_LEVEL=warn")
	cmd.Env = append(cmd.Env, bin.env...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	pr, pw := io.Pipe()
	p := &process{bin: bin, env: env, cmd: cmd, stderr: &redacttest.Logs{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = pw, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		pw.Close()
		close(p.exited)
	}()
	t.Cleanup(func() { p.kill() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "Parley listening on "); ok {
				addr <- a
			}
		}
		close(addr)
	}()
	select {
	case a, ok := <-addr:
		if ok {
			p.URL = a
			return p
		}
		t.Fatalf("parley serve exited before listening:\n%s", p.stderr.String())
	case <-time.After(startupTimeout):
		p.kill()
		t.Fatalf("parley serve did not listen within %s:\n%s", startupTimeout, p.stderr.String())
	}
	return nil
}

// kill ends the process with SIGKILL, as a crash or the OOM killer would,
// and waits until it is gone.
func (p *process) kill() {
	select {
	case <-p.exited:
		return
	default:
	}
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// restart starts the program again, after kill, with the same settings,
// on a new port.
func (p *process) restart(t *testing.T) *process {
	t.Helper()
	p.kill()
	return startProcess(t, p.bin, p.env)
}

// conversation is what a request showed the model, as "role:text" after
// the system prompt.
func conversation(req *llmtest.ChatRequest) []string {
	var out []string
	for _, m := range req.Messages {
		if m.Role != "system" {
			out = append(out, m.Role+":"+m.Text())
		}
	}
	return out
}
