package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/redact/redacttest"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// parleyEnv is the environment of one in-process run of the program.
type parleyEnv map[string]string

func (e parleyEnv) getenv(name string) string { return e[name] }

// forEachDatabase runs fn with the settings of a fresh SQLite data dir, and
// of a fresh PostgreSQL schema when PARLEY_TEST_DATABASE_URL is set, each
// migrated already: a copy of the test process's template (storetest), so
// the program finds its schema current as after its first start.
func forEachDatabase(t *testing.T, fn func(t *testing.T, env parleyEnv)) {
	t.Run(store.DialectSQLite, func(t *testing.T) {
		fn(t, parleyEnv{"PARLEY_DATA_DIR": storetest.SQLiteDataDir(t)})
	})
	if u := os.Getenv(storetest.EnvDatabaseURL); u != "" {
		t.Run(store.DialectPostgres, func(t *testing.T) {
			fn(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_DATABASE_URL": storetest.PostgresSchema(t, u)})
		})
	}
}

// forEachEmptyDatabase is forEachDatabase on databases never migrated,
// for what the program does with an empty one.
func forEachEmptyDatabase(t *testing.T, fn func(t *testing.T, env parleyEnv)) {
	t.Run(store.DialectSQLite, func(t *testing.T) {
		fn(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir()})
	})
	if u := os.Getenv(storetest.EnvDatabaseURL); u != "" {
		t.Run(store.DialectPostgres, func(t *testing.T) {
			fn(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_DATABASE_URL": freshSchema(t, u)})
		})
	}
}

// freshSchema makes a schema private to t and returns a URL that uses it.
func freshSchema(t *testing.T, databaseURL string) string {
	t.Helper()
	ctx := context.Background()
	admin, err := store.Open(ctx, store.Config{DatabaseURL: databaseURL})
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	b := make([]byte, 6)
	rand.Read(b)
	schema := "cmd_" + hex.EncodeToString(b)
	if err := admin.DB().Exec(`CREATE SCHEMA "` + schema + `"`).Error; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		admin.DB().Exec(`DROP SCHEMA "` + schema + `" CASCADE`)
		admin.Close()
	})
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// runParley runs one command to completion and returns its exit code and
// output.
func runParley(t *testing.T, env parleyEnv, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	m := &Main{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Getenv: env.getenv}
	code = m.Run(context.Background(), args)
	return code, out.String(), errb.String()
}

// server is the real program serving on a free port.
type server struct {
	URL    string
	stdout string // what it printed before it was ready
	stop   func() int
}

// startParley starts `parley serve` in-process on 127.0.0.1:0 and waits for
// the line naming its address. stop ends it the way SIGTERM does and
// returns the exit code.
func startParley(t *testing.T, env parleyEnv) *server {
	t.Helper()
	env["PARLEY_ADDR"] = "127.0.0.1:0"
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &redacttest.Logs{}
	m := &Main{Stdin: strings.NewReader(""), Stdout: pw, Stderr: stderr, Getenv: env.getenv}
	done := make(chan int, 1)
	go func() {
		code := m.Run(ctx, []string{"serve"})
		pw.Close()
		done <- code
	}()
	var printed strings.Builder
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		line := sc.Text()
		printed.WriteString(line + "\n")
		if addr, ok := strings.CutPrefix(line, "Parley listening on "); ok {
			go io.Copy(io.Discard, pr) // keep draining so later writes never block
			var once sync.Once
			code := -1
			stop := func() int {
				once.Do(func() {
					cancel()
					select {
					case code = <-done:
					case <-time.After(30 * time.Second):
						t.Errorf("parley serve did not stop; stderr:\n%s", stderr.String())
					}
				})
				return code
			}
			t.Cleanup(func() { stop() })
			return &server{URL: addr, stdout: printed.String(), stop: stop}
		}
	}
	cancel()
	t.Fatalf("parley serve exited (code %d) before listening.\nstdout:\n%s\nstderr:\n%s", <-done, printed.String(), stderr.String())
	return nil
}

func (s *server) client(token string) *apiclient.Client { return apiclient.New(s.URL, token) }

func TestServeGeneratesAPlatformTokenFileAndNeverPrintsSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startParley(t, parleyEnv{"PARLEY_DATA_DIR": dir})
	path := dir + "/" + platformTokenFile
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("platform token file: %v", err)
	}
	if mode := info.Mode().Perm(); mode != 0o600 {
		t.Errorf("platform token file has mode %o, want 600", mode)
	}
	raw, _ := os.ReadFile(path)
	token := strings.TrimSpace(string(raw))
	key, _ := os.ReadFile(dir + "/" + secretKeyFile)
	for _, secret := range []string{token, strings.TrimSpace(string(key))} {
		if secret == "" || strings.Contains(srv.stdout, secret) {
			t.Errorf("start-up output shows a secret or the secret is empty:\n%s", srv.stdout)
		}
	}
	// No key is set here: the banner names the provider and warns.
	for _, want := range []string{"sqlite at " + dir, path, secretKeyFile, "Model provider:  openai at https://api.openai.com/v1", "no PARLEY_LLM_API_KEY is set"} {
		if !strings.Contains(srv.stdout, want) {
			t.Errorf("start-up output does not say %q:\n%s", want, srv.stdout)
		}
	}
	ctx := context.Background()
	if _, err := srv.client(token).ListTenants(ctx, ""); err != nil {
		t.Errorf("the generated token does not work: %v", err)
	}
	if code := srv.stop(); code != 0 {
		t.Errorf("serve exited with %d after a graceful stop, want 0", code)
	}
	// A restart reuses the token instead of making a new one.
	srv = startParley(t, parleyEnv{"PARLEY_DATA_DIR": dir})
	if _, err := srv.client(token).ListTenants(ctx, ""); err != nil {
		t.Errorf("the token stopped working after a restart: %v", err)
	}
}

func TestServeRefusesABadSecretKeyWithoutEchoingIt(t *testing.T) {
	t.Parallel()
	code, _, stderr := runParley(t, parleyEnv{"PARLEY_DATA_DIR": t.TempDir(), "PARLEY_ADDR": "127.0.0.1:0",
		"PARLEY_SECRET_KEY": "not-a-key-zzzz"}, "serve")
	if code != 1 || !strings.Contains(stderr, "PARLEY_SECRET_KEY") {
		t.Errorf("exit %d, stderr %q; want 1 naming PARLEY_SECRET_KEY", code, stderr)
	}
	if strings.Contains(stderr, "not-a-key-zzzz") {
		t.Errorf("the error echoes the key: %s", stderr)
	}
}

// TestASecondServerOnOneSQLiteDatabaseIsRefused: SQLite serves one server
// process, which is what lets it remember API keys (every revocation is
// its own); a second one fails at start saying so, while the
// command-line tools still work beside the first.
func TestASecondServerOnOneSQLiteDatabaseIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	srv := startParley(t, parleyEnv{"PARLEY_DATA_DIR": dir})
	// Bounded: a second server that did start would serve until stopped.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errb bytes.Buffer
	second := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &errb,
		Getenv: parleyEnv{"PARLEY_DATA_DIR": dir, "PARLEY_ADDR": "127.0.0.1:0"}.getenv}
	code, stderr := second.Run(ctx, []string{"serve"}), errb.String()
	if code != 1 || !strings.Contains(stderr, "another parley serve") || !strings.Contains(stderr, "PARLEY_DATABASE_URL") {
		t.Errorf("a second server: exit %d, stderr %q; want 1, naming the other server and PARLEY_DATABASE_URL", code, stderr)
	}
	if code, _, stderr := runParley(t, parleyEnv{"PARLEY_DATA_DIR": dir}, "migrate"); code != 0 {
		t.Errorf("migrate beside the server: exit %d, %s", code, stderr)
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("serve exited with %d", code)
	}
	startParley(t, parleyEnv{"PARLEY_DATA_DIR": dir}) // the file is free again
}

// TestServeOnATakenPortFailsWithOnlyTheBindError: a server that cannot
// bind its address says so and nothing else. It used to open the
// database, start its background loops and only then bind, so the loops
// logged errors about the database the failed start closed under them.
func TestServeOnATakenPortFailsWithOnlyTheBindError(t *testing.T) {
	forEachDatabase(t, func(t *testing.T, env parleyEnv) {
		taken, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer taken.Close()
		addr := taken.Addr().String()
		env["PARLEY_ADDR"] = addr
		code, stdout, stderr := runParley(t, env, "serve")
		want := "parley serve: listen on " + addr + " (PARLEY_ADDR): listen tcp " + addr + ": bind: address already in use\n"
		if code != 1 || stderr != want {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and only:\n%s", code, stderr, want)
		}
		if stdout != "" {
			t.Errorf("it announced itself:\n%s", stdout)
		}
	})
}
