package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/jackc/pgx/v5"
)

// Servers sharing a PostgreSQL database learn which of them are alive
// from the database itself: each holds, on a connection of its own, a
// session-level advisory lock named after its instance id, for as long
// as it lives. PostgreSQL drops the lock the moment that connection ends,
// which it does as soon as the process dies, however it dies (the kernel
// closes its sockets). A dialog lease whose owner is an instance whose
// lock is free was left by a dead process, and is taken at once rather
// than when it expires.
//
// A host that vanishes (power lost, network cut) closes nothing: no FIN,
// no RST reaches PostgreSQL, whose backend would keep the idle session,
// and the lock, until TCP gives up on it, two hours and more with the
// operating system's defaults. So the lock's connection (and the key
// listener's, and the pool's) asks its backend to probe the client sooner
// (vanishedClientSQL).

// instancePrefix starts the instance ids whose liveness the lock tells.
// Lease owners are "<instance id>/<run>"; an owner without the prefix
// (another tool, a test) is trusted until its lease expires.
const instancePrefix = "live:"

// ownerDeadSQL, in the lease upsert's conflict clause, is true when the
// lease's owner is another instance whose lock is free: that instance is
// dead. Trying the lock for the length of the statement takes it only
// when nobody holds it. CASE keeps the try from running for the caller's
// own instance, or for an owner that holds no lock.
const ownerDeadSQL = `CASE WHEN dialog_leases.owner LIKE '` + instancePrefix + `%'
      AND split_part(dialog_leases.owner, '/', 1) <> split_part(excluded.owner, '/', 1)
    THEN pg_try_advisory_xact_lock(hashtextextended(split_part(dialog_leases.owner, '/', 1), 0))
    ELSE false END`

// instanceCheck is how often the instance's lock connection is checked,
// and how soon after losing it the instance takes it again.
const instanceCheck = 2 * time.Second

// The backend's TCP settings on the connections whose life says "this
// server is alive". The backend probes a connection quiet for
// backendKeepaliveIdle every backendKeepaliveInterval and drops it after
// backendKeepaliveCount unanswered probes: 10 + 3×5 = 25 s after the
// client last spoke (the lock's client pings every instanceCheck, so it
// is never quiet that long while it lives). backendUserTimeout drops it
// as soon when what the backend sent stays unacknowledged (a reply, a
// notification), where Linux would otherwise retransmit for about 15
// minutes. PostgreSQL ignores them on a Unix socket, where a vanished
// peer cannot be.
const (
	backendKeepaliveIdle     = 10 * time.Second
	backendKeepaliveInterval = 5 * time.Second
	backendKeepaliveCount    = 3
	backendUserTimeout       = 25 * time.Second
)

// vanishedClientSQL sets the backend's TCP settings for the session.
// SET rather than startup parameters, which PgBouncer refuses.
func vanishedClientSQL() string {
	return fmt.Sprintf("SET tcp_keepalives_idle = %d; SET tcp_keepalives_interval = %d; "+
		"SET tcp_keepalives_count = %d; SET tcp_user_timeout = %d",
		int(backendKeepaliveIdle.Seconds()), int(backendKeepaliveInterval.Seconds()),
		backendKeepaliveCount, backendUserTimeout.Milliseconds())
}

// instancePingTimeout bounds the lock's ping: a connection to a
// PostgreSQL that vanished answers nothing, and without a bound the ping
// would wait as long as TCP retransmits, this server believing itself
// the lock's holder all along.
const instancePingTimeout = 5 * time.Second

// instanceApplication names the lock's connection in pg_stat_activity.
const instanceApplication = "parley instance lock"

// instanceLock holds the instance's liveness lock while the store is
// open, reconnecting when its connection breaks.
type instanceLock struct {
	id   string
	cfg  *pgx.ConnConfig
	log  *slog.Logger
	stop context.CancelFunc
	done chan struct{}
}

// newInstanceID names this process: host and pid for people reading
// leases, random bits so a restarted process (same pid in a container)
// is another instance.
func newInstanceID() string {
	host, _ := os.Hostname()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s%s-%d-%s", instancePrefix, host, os.Getpid(), hex.EncodeToString(b))
}

// holdInstanceLock takes the lock of a new instance id and keeps it until
// close.
func holdInstanceLock(ctx context.Context, cfg *pgx.ConnConfig, log *slog.Logger) (*instanceLock, error) {
	cfg.RuntimeParams["application_name"] = instanceApplication
	l := &instanceLock{id: newInstanceID(), cfg: cfg, log: log, done: make(chan struct{})}
	conn, err := l.lock(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: instance lock: %w", err)
	}
	runCtx, stop := context.WithCancel(context.Background())
	l.stop = stop
	go l.keep(runCtx, conn)
	return l, nil
}

// lock connects and takes the instance's lock on that connection.
func (l *instanceLock) lock(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return nil, err
	}
	if _, err := conn.Exec(ctx, vanishedClientSQL()); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtextextended($1, 0))`, l.id); err != nil {
		conn.Close(ctx)
		return nil, err
	}
	return conn, nil
}

// keep checks the lock's connection and, when it broke, takes the lock
// again on a new one, until ctx ends.
func (l *instanceLock) keep(ctx context.Context, conn *pgx.Conn) {
	defer close(l.done)
	t := time.NewTicker(instanceCheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if conn != nil {
				// Released before the connection ends, so the others
				// see this instance gone as Close returns.
				bg := context.Background()
				_, _ = conn.Exec(bg, `SELECT pg_advisory_unlock_all()`)
				conn.Close(bg)
			}
			return
		case <-t.C:
		}
		if conn != nil {
			pctx, cancel := context.WithTimeout(ctx, instancePingTimeout)
			err := conn.Ping(pctx)
			cancel()
			if err == nil {
				continue
			}
			conn.Close(context.Background())
			conn = nil
			l.log.Warn("store: the instance's liveness lock was lost; taking it again (other servers may take over its dialogs meanwhile)")
		}
		var err error
		if conn, err = l.lock(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("store: instance liveness lock", "err", err)
		}
	}
}

func (l *instanceLock) close() {
	l.stop()
	<-l.done
}
