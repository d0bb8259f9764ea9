package dialog_test

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/agent"
	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/redislimit"
)

// holdFirstEvent is a sink that blocks the run on its first event until
// release, so the test acts while the reply is being generated.
type holdFirstEvent struct {
	started chan struct{}
	release chan struct{}
	once    sync.Once
}

func newHold() *holdFirstEvent {
	return &holdFirstEvent{started: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdFirstEvent) Send(agent.Event) {
	h.once.Do(func() { close(h.started); <-h.release })
}

// streamLimitCase: with one stream per tenant, a second dialog's message
// is refused while the first reply runs, and passes once it is done.
func streamLimitCase(t *testing.T, e *rtEnv) {
	first, second := e.dialog(t), e.dialog(t)
	e.llm.Enqueue(llmtest.ServerReply{Text: "one"}, llmtest.ServerReply{Text: "two"})
	hold := newHold()
	done := make(chan error, 1)
	go func() {
		_, err := e.rt.SendMessage(ctx, e.admin, "shop", first.ID, dialog.SendInput{Text: "1"}, hold)
		done <- err
	}()
	<-hold.started
	_, err := e.rt.SendMessage(ctx, e.admin, "shop", second.ID, dialog.SendInput{Text: "2"}, nil)
	wantCode(t, err, platform.CodeRateLimited)
	if dialog.RetryAfter(err) <= 0 {
		t.Fatal("no retry time")
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.SendMessage(ctx, e.admin, "shop", second.ID, dialog.SendInput{Text: "2"}, nil); err != nil {
		t.Fatalf("after the first reply ended: %v", err)
	}
}

func TestTenantStreams(t *testing.T) {
	t.Parallel()
	t.Run("counted in this process", func(t *testing.T) {
		forEachRuntime(t, dialog.Limits{TenantStreams: 1}, streamLimitCase)
	})
	t.Run("counted in Redis", func(t *testing.T) {
		forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
			e.rt = e.runtime(t, dialog.Options{Provider: e.rtProvider(t), DefaultModel: "gpt-4o-mini",
				Limits: dialog.Limits{TenantStreams: 1}, Shared: localRedis(t, redislimit.Options{})})
			streamLimitCase(t, e)
		})
	})
}

// localRedis is a running Limiter on the Redis at 127.0.0.1:6379, or
// skips the test when none answers there (CI starts one: .ci/run).
func localRedis(t testing.TB, opts redislimit.Options) *redislimit.Limiter {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:6379", time.Second)
	if err != nil {
		t.Skip("no Redis answers on 127.0.0.1:6379 (start redis-server; CI does): ", err)
	}
	c.Close()
	l, err := redislimit.Open("redis://127.0.0.1:6379/0", opts)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { defer close(stopped); l.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-stopped; l.Close() })
	for !l.Up() {
		select {
		case <-stopped:
			t.Fatal("the limiter stopped")
		case <-time.After(5 * time.Millisecond):
		}
	}
	return l
}

// absentRedis is a Limiter on an address nothing answers at, probed
// once, so it is down.
func absentRedis(t *testing.T) *redislimit.Limiter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	l, err := redislimit.Open("redis://"+addr, redislimit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	t.Run("fail open: limits are counted in this process", func(t *testing.T) {
		forEachRuntime(t, dialog.Limits{KeyRate: 0.001, KeyBurst: 1}, func(t *testing.T, e *rtEnv) {
			rt := e.runtime(t, dialog.Options{Provider: e.rtProvider(t), DefaultModel: "gpt-4o-mini",
				Limits: dialog.Limits{KeyRate: 0.001, KeyBurst: 1}, Shared: absentRedis(t)})
			if got := rt.Quotas().SharedLimits(); got != dialog.SharedDown {
				t.Fatalf("SharedLimits %q", got)
			}
			d := e.dialog(t)
			e.llm.Enqueue(llmtest.ServerReply{Text: "one"})
			if _, err := rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "1"}, nil); err != nil {
				t.Fatal(err)
			}
			_, err := rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "2"}, nil)
			wantCode(t, err, platform.CodeRateLimited)
		})
	})
	t.Run("fail closed: messages are refused as unavailable, and nothing is stored", func(t *testing.T) {
		forEachRuntime(t, dialog.Limits{}, func(t *testing.T, e *rtEnv) {
			rt := e.runtime(t, dialog.Options{Provider: e.rtProvider(t), DefaultModel: "gpt-4o-mini",
				Limits: dialog.Limits{DailyTokens: 1000}, Shared: absentRedis(t), SharedFailClosed: true})
			d := e.dialog(t)
			_, err := rt.SendMessage(ctx, e.admin, "shop", d.ID, dialog.SendInput{Text: "1"}, nil)
			wantCode(t, err, platform.CodeUnavailable)
			if h := e.history(t, d.ID); len(h) != 0 {
				t.Fatalf("a refused message was stored: %q", h)
			}
		})
	})
}
