package store

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestTheInstanceLocksBackendProbesAVanishedHost: the backend holding
// the instance's lock probes its client within seconds, so a server
// whose host vanished (no FIN, no RST) loses its lock, and its dialogs,
// in about 25 s rather than when TCP's defaults give up, hours later.
// Over TCP only: PostgreSQL reads these settings as 0 on a Unix socket.
func TestTheInstanceLocksBackendProbesAVanishedHost(t *testing.T) {
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
	// SHOW reads seconds, and milliseconds for the user timeout.
	for _, tt := range []struct{ setting, want string }{
		{"tcp_keepalives_idle", "10"},
		{"tcp_keepalives_interval", "5"},
		{"tcp_keepalives_count", "3"},
		{"tcp_user_timeout", "25000"},
	} {
		var got string
		if err := conn.QueryRow(ctx, "SHOW "+tt.setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tt.want {
			t.Errorf("the lock's backend has %s %q; want %q", tt.setting, got, tt.want)
		}
	}
}
