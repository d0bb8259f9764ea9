package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/parleyhq/parley/pkg/pii"
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
	// Migrating is this command's job, whatever PARLEY_MIGRATE says for
	// the others (a pod's environment may hold skip).
	settings.Migrate = migrateAuto
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
// to date, or with PARLEY_MIGRATE=skip checks that it is. Every command
// that touches data goes through it, so none can run against an old
// schema. server opens it for the server (store.Config).
func openStore(ctx context.Context, s Settings, log *slog.Logger, server bool) (*store.Store, error) {
	st, err := store.Open(ctx, store.Config{DatabaseURL: s.DatabaseURL, DataDir: s.DataDir, Logger: log, Server: server})
	if err != nil {
		return nil, err
	}
	if err := upToDate(ctx, st, s.Migrate); err != nil {
		st.Close()
		return nil, err
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

// upToDate migrates st, or with migrateSkip refuses a schema older than
// this build's: replicas that skip leave migrating to one `parley migrate`
// per release, and one started before it ran must not serve.
func upToDate(ctx context.Context, st *store.Store, mode string) error {
	if mode != migrateSkip {
		if err := st.Migrate(ctx); err != nil {
			return fmt.Errorf("migrate %s database at %s: %w", st.Dialect(), st.Location(), err)
		}
		return nil
	}
	have, err := st.SchemaVersion(ctx)
	if err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if want := store.LatestSchemaVersion(); have < want {
		return fmt.Errorf("the %s database at %s is at schema version %d and this build needs %d; "+
			"run parley migrate first (PARLEY_MIGRATE=skip: this command does not migrate)", st.Dialect(), st.Location(), have, want)
	}
	return nil
}

// logger writes JSON logs at the configured level to stderr, with the
// personal data of a dialog whose bot asks for it masked (pkg/pii).
func (m *Main) logger(s Settings) *slog.Logger {
	return slog.New(pii.NewLogHandler(slog.NewJSONHandler(m.Stderr, &slog.HandlerOptions{Level: s.LogLevel})))
}
