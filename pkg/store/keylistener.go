package store

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// revocationChannel is the PostgreSQL NOTIFY channel on which Keys.Revoke
// (and Keys.SetOrigins) publishes the id of the key it changed; the
// notification goes out when the change commits, and each process drops
// the key from its cache.
const revocationChannel = "parley_key_revoked"

// listenerApplication names the listener's connection in pg_stat_activity.
const listenerApplication = "parley key revocations"

// listenerCheck is how long the listener waits for a notification before
// it pings its connection: one that died without a word would otherwise
// leave the cache trusting keys revoked since.
const listenerCheck = 30 * time.Second

// keyListener keeps keys live on PostgreSQL: it listens on
// revocationChannel on a connection of its own and drops each revoked key
// from the cache. On the same connection it hears replyStopChannel, the
// asks to stop a dialog's reply (Signals.OnReplyStop). Until it listens, and whenever its connection fails, the
// cache is off, so every request reads its key and no revocation is missed.
// It starts with the first key read, so stores that never authenticate
// (migrations, the CLI) hold no extra connection.
type keyListener struct {
	cfg  *pgx.ConnConfig
	keys *keyCache
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	started bool
	closed  bool
	// onStop hears replyStopChannel (Signals.OnReplyStop); nil ignores it.
	onStop func(tenantID, dialogID string)
	// onSignal hears dialogSignalChannel (Signals.OnDialog); nil
	// ignores it.
	onSignal func(tenantID, dialogID, signal string)
}

func (l *keyListener) setOnSignal(hear func(tenantID, dialogID, signal string)) {
	l.mu.Lock()
	l.onSignal = hear
	l.mu.Unlock()
}

func (l *keyListener) setOnStop(stop func(tenantID, dialogID string)) {
	l.mu.Lock()
	l.onStop = stop
	l.mu.Unlock()
}

// heard dispatches a notification by its channel.
func (l *keyListener) heard(n *pgconn.Notification) {
	l.mu.Lock()
	stop, signal := l.onStop, l.onSignal
	l.mu.Unlock()
	switch n.Channel {
	case replyStopChannel:
	case dialogSignalChannel:
		if tenantID, dialogID, what, ok := parseSignalPayload(n.Payload); ok && signal != nil {
			signal(tenantID, dialogID, what)
		}
		return
	default:
		l.keys.drop(n.Payload)
		return
	}
	if tenantID, dialogID, ok := parseStopPayload(n.Payload); ok && stop != nil {
		stop(tenantID, dialogID)
	}
}

func newKeyListener(cfg *pgx.ConnConfig, keys *keyCache, log *slog.Logger) *keyListener {
	cfg.RuntimeParams["application_name"] = listenerApplication
	ctx, cancel := context.WithCancel(context.Background())
	return &keyListener{cfg: cfg, keys: keys, log: log, ctx: ctx, cancel: cancel, done: make(chan struct{})}
}

// start starts listening, once; nothing after close.
func (l *keyListener) start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started || l.closed {
		return
	}
	l.started = true
	go l.run()
}

// close stops listening; closing again does nothing.
func (l *keyListener) close() {
	l.mu.Lock()
	started, closed := l.started, l.closed
	l.closed = true
	l.mu.Unlock()
	l.cancel()
	if started && !closed {
		<-l.done
	}
}

func (l *keyListener) run() {
	defer close(l.done)
	wait := time.Second
	for {
		listened, err := l.listen()
		l.keys.setLive(false)
		if l.ctx.Err() != nil {
			return
		}
		if listened {
			wait = time.Second
		}
		l.log.Warn("store: not hearing API key revocations or reply stops; every request reads its key until this reconnects",
			"err", err, "retry_in", wait)
		select {
		case <-l.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
}

// listen hears revocations until its connection fails or the listener
// closes; listened says it got as far as LISTEN.
func (l *keyListener) listen() (listened bool, err error) {
	ctx := l.ctx
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return false, err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()
	// The backend probes this client like the instance lock's: a
	// listener whose host vanished holds a connection slot, and the
	// NOTIFY queue cannot shrink past what it has not yet sent on.
	if _, err := conn.Exec(ctx, vanishedClientSQL()+"; LISTEN "+revocationChannel+"; LISTEN "+replyStopChannel+"; LISTEN "+dialogSignalChannel); err != nil {
		return false, err
	}
	l.keys.setLive(true)
	for {
		wctx, cancel := context.WithTimeout(ctx, listenerCheck)
		n, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			l.heard(n)
		case ctx.Err() != nil:
			return true, nil
		case pgconn.Timeout(err):
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			err := conn.Ping(pctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				return true, err
			}
		default:
			return true, err
		}
	}
}
