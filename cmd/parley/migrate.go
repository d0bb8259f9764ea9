package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/parleyhq/parley/pkg/store"
)

// migrate brings the database schema up to date: `parley migrate`.
func (m *Main) migrate(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("parley migrate", flag.ContinueOnError)
	fs.SetOutput(m.Stderr)
	fs.Usage = func() {
		fmt.Fprintln(m.Stderr, "usage: parley migrate\n\nBrings the database schema up to date; running it again changes nothing.")
		printSettings(m.Stderr)
	}
	if _, helped, err := parseArgs(fs, args, 0); helped || err != nil {
		return err
	}
	settings, err := LoadSettings(m.Getenv)
	if err != nil {
		return err
	}
	st, err := openStore(ctx, settings, m.logger(settings), false)
	if err != nil {
		return err
	}
	defer st.Close()
	version, err := st.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	fmt.Fprintf(m.Stdout, "%s database at %s is at schema version %d\n", st.Dialect(), st.Location(), version)
	return nil
}

// openStore opens the database the settings name and brings its schema up
// to date. Every command that touches data goes through it, so none can run
// against an old schema. server opens it for the server (store.Config).
func openStore(ctx context.Context, s Settings, log *slog.Logger, server bool) (*store.Store, error) {
	st, err := store.Open(ctx, store.Config{DatabaseURL: s.DatabaseURL, DataDir: s.DataDir, Logger: log, Server: server})
	if err != nil {
		return nil, err
	}
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("migrate %s database at %s: %w", st.Dialect(), st.Location(), err)
	}
	if server {
		// What a server that died left is settled before anyone asks, so
		// its dialogs answer as soon as this one listens.
		settled, err := st.Abandoned().Settle(ctx)
		if err != nil {
			st.Close()
			return nil, err
		}
		if settled != (store.Settled{}) {
			log.Warn("settled what a server that stopped abruptly left", "interrupted_replies", settled.Interrupted,
				"dialog_leases", settled.Leases)
		}
	}
	return st, nil
}

// logger writes JSON logs at the configured level to stderr.
func (m *Main) logger(s Settings) *slog.Logger {
	return slog.New(slog.NewJSONHandler(m.Stderr, &slog.HandlerOptions{Level: s.LogLevel}))
}
