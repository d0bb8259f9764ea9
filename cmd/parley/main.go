package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	m := &Main{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	os.Exit(m.Run(ctx, os.Args[1:]))
}

// Main is the program with its inputs and outputs injected, so tests can run
// every subcommand in-process.
type Main struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// command is one subcommand.
type command struct {
	summary string
	run     func(m *Main, ctx context.Context, args []string) error
}

func (m *Main) commands() map[string]command {
	return map[string]command{
		"serve":    {"run the server", (*Main).serve},
		"validate": {"check agent config files", (*Main).validate},
		"chat":     {"talk to a bot in the terminal", (*Main).chat},
		"test":     {"run bots' conversation tests", (*Main).test},
		"apply":    {"create or update tenants and bots from a directory", (*Main).apply},
		"tenant":   {"manage tenants (tenant create SLUG)", (*Main).tenant},
		"user":     {"manage users and members; recover a lost admin key", (*Main).user},
		"migrate":  {"bring the database schema up to date", (*Main).migrate},
	}
}

// exitError ends the program with a code after its output was already written.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// Run runs the subcommand named by args[0] and returns the process exit code.
func (m *Main) Run(ctx context.Context, args []string) int {
	cmds := m.commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		m.usage(cmds)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(m.Stderr, "parley: unknown command %q\n", args[0])
		m.usage(cmds)
		return 2
	}
	err := cmd.run(m, ctx, args[1:])
	var exit exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.code
	case errors.Is(err, errUsage):
		return 2
	default:
		fmt.Fprintf(m.Stderr, "parley %s: %v\n", args[0], err)
		return 1
	}
}

// errUsage reports a usage mistake whose message was already printed.
var errUsage = errors.New("usage")

func (m *Main) usage(cmds map[string]command) {
	fmt.Fprintln(m.Stderr, "usage: parley <command> [flags]\n\ncommands:")
	for _, name := range []string{"serve", "validate", "chat", "test", "apply", "tenant", "user", "migrate"} {
		fmt.Fprintf(m.Stderr, "  %-9s %s\n", name, cmds[name].summary)
	}
	fmt.Fprintln(m.Stderr, "\nRun 'parley <command> --help' for a command's flags; 'parley serve --help' lists the settings.")
}
