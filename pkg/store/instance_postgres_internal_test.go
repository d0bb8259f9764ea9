package store

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestTheBackendsProbeAVanishedHost: the backend holding the instance's
// lock, and every pooled connection's, probes its client within seconds, so a server
// whose host vanished (no FIN, no RST) loses its lock, and its dialogs,
// in about 25 s rather than when TCP's defaults give up, hours later.
// Over TCP only: PostgreSQL reads these settings as 0 on a Unix socket.
func TestTheBackendsProbeAVanishedHost(t *testing.T) {
	t.Parallel()
	url := os.Getenv("PARLEY_TEST_DATABASE_URL")
	if url == "" {
		t.Skip("PARLEY_TEST_DATABASE_URL is not set")
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	l := &instanceLock{id: newInstanceID(), cfg: cfg}
	conn, err := l.lock(ctx) // the connection that holds the lock
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// The pool's connections too: one of a vanished host's could be in a
	// transaction, holding a dialog's row locks.
	s, err := Open(ctx, Config{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	show := map[string]func(setting string) (string, error){
		"the lock's": func(setting string) (string, error) {
			var v string
			return v, conn.QueryRow(ctx, "SHOW "+setting).Scan(&v)
		},
		"a pooled connection's": func(setting string) (string, error) {
			var v string
			return v, s.db.WithContext(ctx).Raw("SHOW " + setting).Row().Scan(&v)
		},
	}
	// SHOW reads seconds, and milliseconds for the user timeout.
	for _, tt := range []struct{ setting, want string }{
		{"tcp_keepalives_idle", "10"},
		{"tcp_keepalives_interval", "5"},
		{"tcp_keepalives_count", "3"},
		{"tcp_user_timeout", "25000"},
	} {
		for whose, read := range show {
			got, err := read(tt.setting)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("%s backend has %s %q; want %q", whose, tt.setting, got, tt.want)
			}
		}
	}
}
