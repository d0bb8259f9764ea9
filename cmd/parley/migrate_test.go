package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

// TestServeWithMigrateSkipLeavesMigratingToParleyMigrate: replicas told
// PARLEY_MIGRATE=skip never change the schema (the Helm chart's migration
// job does, once per release); one started before the job ran refuses to
// serve and says what to run, and after it runs they serve.
func TestServeWithMigrateSkipLeavesMigratingToParleyMigrate(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		env["PARLEY_MIGRATE"] = "skip"
		wantNeeds := fmt.Sprintf("schema version 0 and this build needs %d", store.LatestSchemaVersion())

		t.Run("serve refuses a database parley migrate has not brought up to date", func(t *testing.T) {
			code, stderr := serveBriefly(t, env)
			if code != 1 || !strings.Contains(stderr, wantNeeds) || !strings.Contains(stderr, "run parley migrate first") {
				t.Errorf("exit %d, stderr %q; want 1, saying %q and naming parley migrate", code, stderr, wantNeeds)
			}
			if v := schemaVersion(t, env); v != 0 {
				t.Errorf("the schema is at version %d after a refused start, want it untouched at 0", v)
			}
		})
		t.Run("the command-line tools refuse it too", func(t *testing.T) {
			code, _, stderr := runParley(t, env, "tenant", "create", "acme")
			if code != 1 || !strings.Contains(stderr, wantNeeds) {
				t.Errorf("tenant create: exit %d, stderr %q; want 1 saying %q", code, stderr, wantNeeds)
			}
		})
		t.Run("parley migrate migrates although its environment says skip", func(t *testing.T) {
			if code, stdout, stderr := runParley(t, env, "migrate"); code != 0 {
				t.Fatalf("migrate: exit %d, %s%s", code, stdout, stderr)
			}
			if v := schemaVersion(t, env); v != store.LatestSchemaVersion() {
				t.Errorf("schema version %d after parley migrate, want %d", v, store.LatestSchemaVersion())
			}
		})
		t.Run("serve then starts and is ready", func(t *testing.T) {
			srv := startParley(t, env)
			res, err := http.Get(srv.URL + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("/readyz answered %d, want 200", res.StatusCode)
			}
		})
	})
}

func TestLoadSettingsReadsPARLEY_MIGRATE(t *testing.T) {
	tests := []struct {
		name, value, want, wantFail string
	}{
		{name: "unset migrates on start, as before the setting existed", value: "", want: migrateAuto},
		{name: "skip in capitals is skip", value: "SKIP", want: migrateSkip},
		{name: "anything else is refused", value: "never", wantFail: `PARLEY_MIGRATE: "never" is not auto or skip`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSettings(parleyEnv{"PARLEY_MIGRATE": tt.value}.getenv)
			if tt.wantFail != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantFail) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantFail)
				}
				return
			}
			if err != nil || s.Migrate != tt.want {
				t.Fatalf("Migrate %q, err %v; want %q", s.Migrate, err, tt.want)
			}
		})
	}
}

// serveBriefly runs `parley serve` expecting it to refuse to start; the
// deadline ends one that started anyway, which then exits 0 and fails the
// caller's check.
func serveBriefly(t *testing.T, env parleyEnv) (code int, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	served := parleyEnv{"PARLEY_ADDR": "127.0.0.1:0"}
	for k, v := range env {
		served[k] = v
	}
	var errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb, Getenv: served.getenv}
	return m.Run(ctx, []string{"serve"}), errb.String()
}

// schemaVersion reads the schema version of the database env names,
// without migrating it.
func schemaVersion(t *testing.T, env parleyEnv) int {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DatabaseURL: env["PARLEY_DATABASE_URL"], DataDir: env["PARLEY_DATA_DIR"]})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
