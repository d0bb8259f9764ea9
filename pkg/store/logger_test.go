package store_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/parleyhq/parley/pkg/store"
)

// storeWithLogs is a SQLite store whose log lines go to logs, as JSON.
func storeWithLogs(t *testing.T, logs *bytes.Buffer) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{DataDir: t.TempDir(), Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestAnExpectedConflictIsNotLoggedAsAnError(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	ctx := context.Background()
	st := storeWithLogs(t, &logs)
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.Tenants().Create(ctx, &store.Tenant{Slug: "acme", Name: "Acme"}); err != nil {
		t.Fatal(err)
	}
	err := st.Tenants().Create(ctx, &store.Tenant{Slug: "acme", Name: "Acme again"})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second CreateTenant = %v, want ErrConflict", err)
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) {
		t.Errorf("a slug conflict was logged as an error:\n%s", logs.String())
	}
}

func TestAFailedPostgresConnectionLogsReadableText(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	_, err := store.Open(context.Background(), store.Config{
		DatabaseURL: "postgres://parley:hunter2@127.0.0.1:1/none?sslmode=disable&connect_timeout=2",
		Logger:      slog.New(slog.NewJSONHandler(&logs, nil)),
	})
	if err == nil {
		t.Skip("something answers on port 1")
	}
	if strings.Contains(logs.String(), "unsupported type") || strings.Contains(logs.String()+err.Error(), "hunter2") {
		t.Errorf("logs = %s\nerr = %v", logs.String(), err)
	}
}

// TestLoggedStatementsHoldNoValues: a failed or slow statement is logged
// with its SQL, never with its arguments, which hold users' messages,
// hashes and ciphertext.
func TestLoggedStatementsHoldNoValues(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	st := storeWithLogs(t, &logs)
	if err := st.DB().Exec("UPDATE no_such_table SET text = ? WHERE id = ?", "my card is 4111-1111", "msg_1").Error; err == nil {
		t.Fatal("the statement succeeded")
	}
	if !strings.Contains(logs.String(), "no_such_table") {
		t.Fatalf("the failure was not logged:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "4111") || strings.Contains(logs.String(), "msg_1") {
		t.Fatalf("the log holds the statement's values:\n%s", logs.String())
	}
}
