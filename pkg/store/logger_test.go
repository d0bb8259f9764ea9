package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

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

// TestASlowStatementSaysHowBusyThePoolWas: a statement's time includes
// its wait for a pooled connection, so its warning says how many were in
// use as it ended; every one busy points at the pool, not the database.
func TestASlowStatementSaysHowBusyThePoolWas(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	ctx := context.Background()
	st := storeWithLogs(t, &logs)
	sqlDB, err := st.DB().DB()
	if err != nil {
		t.Fatal(err)
	}
	held, err := sqlDB.Conn(ctx) // SQLite's one connection, as a long transaction holds it
	if err != nil {
		t.Fatal(err)
	}
	statement := func() (string, int64) { return "UPDATE dialogs SET state = $1 WHERE id = $2", 1 }
	quick, slow := time.Now(), time.Now().Add(-2*time.Second)
	st.DB().Logger.Trace(ctx, quick, statement, nil)
	if logs.Len() != 0 {
		t.Fatalf("a quick statement was logged:\n%s", logs.String())
	}
	st.DB().Logger.Trace(ctx, slow, statement, nil)
	held.Close()
	var line struct {
		Level, Msg, SQL string
		DurationMS      int64 `json:"duration_ms"`
		PoolInUse       int   `json:"pool_in_use"`
		PoolMax         int   `json:"pool_size"`
	}
	dec := json.NewDecoder(&logs)
	if err := dec.Decode(&line); err != nil {
		t.Fatal(err)
	}
	if line.Level != "WARN" || !strings.Contains(line.Msg, "slow SQL statement") || line.SQL == "" || line.DurationMS < 2000 {
		t.Fatalf("logged %+v; want a warning with the statement and its 2 s", line)
	}
	if line.PoolInUse != 1 || line.PoolMax != 1 {
		t.Fatalf("pool %d of %d in use; want the one connection, held", line.PoolInUse, line.PoolMax)
	}
}
