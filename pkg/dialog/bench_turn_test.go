package dialog_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/parleyhq/parley/pkg/dialog"
	"github.com/parleyhq/parley/pkg/dialog/dialogtest"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/llm/openai"
	"github.com/parleyhq/parley/pkg/platform"
	"github.com/parleyhq/parley/pkg/platform/platformtest"
	"github.com/parleyhq/parley/pkg/redislimit"
	"github.com/parleyhq/parley/pkg/store"
	"github.com/parleyhq/parley/pkg/store/storetest"
)

// turnsPerDialog is how many messages a benchmark dialog gets before a new
// one starts: a real conversation's length, so history loading is counted
// without growing without bound.
const turnsPerDialog = 10

// BenchmarkTurn is one user message answered in text, on SQLite and (with
// PARLEY_TEST_DATABASE_URL) PostgreSQL, by 1 and by 10 dialogs at once,
// and then with limits shared through the Redis at 127.0.0.1:6379 when
// one answers. It reports the database statements a turn costs
// ("stmts/turn"), the number to keep small: on PostgreSQL every
// autocommit statement that writes is a WAL flush; and with Redis, the
// round trips a turn makes to it ("redis/turn", one by design: the admit
// script), and apart from them the limiter's flushes, one pipeline every
// 100 ms off the turns' path ("flushes/turn").
//
//	go test -run '^$' -bench BenchmarkTurn -benchmem ./pkg/dialog
func BenchmarkTurn(b *testing.B) {
	backends := []struct {
		name string
		open func(testing.TB) *store.Store
	}{{store.DialectSQLite, storetest.OpenSQLite}}
	if u := os.Getenv(storetest.EnvDatabaseURL); u != "" {
		backends = append(backends, struct {
			name string
			open func(testing.TB) *store.Store
		}{store.DialectPostgres, func(tb testing.TB) *store.Store { return storetest.OpenPostgres(tb, u) }})
	}
	for _, be := range backends {
		for _, shared := range []bool{false, true} {
			for _, dialogs := range []int{1, 10} {
				name := fmt.Sprintf("%s/dialogs=%d", be.name, dialogs)
				if shared {
					name = fmt.Sprintf("%s+redis/dialogs=%d", be.name, dialogs)
				}
				b.Run(name, func(b *testing.B) {
					st := be.open(b)
					stmts := countStatements(st.DB())
					var hook *countTrips
					opts := dialog.Options{}
					if shared {
						// The quota and the stream limit, which only Redis
						// counts across servers, are on and never refuse.
						hook = &countTrips{}
						opts.Shared = localRedis(b, redislimit.Options{Prefix: fmt.Sprintf("parley-bench-%d:", time.Now().UnixNano()), Hook: hook})
						opts.Limits = dialog.Limits{DailyTokens: 1 << 40, TenantStreams: 1 << 20}
					}
					rt := benchRuntimeWith(b, st, opts)
					ctx, op := context.Background(), platform.Operator()
					b.SetParallelism((dialogs + 1) / 2) // GOMAXPROCS is 2 on the reference machine
					b.ReportAllocs()
					stmts.Store(0)
					if hook != nil {
						hook.commands.Store(0)
						hook.pipelines.Store(0)
					}
					b.ResetTimer()
					b.RunParallel(func(pb *testing.PB) {
						dialogID, n := "", 0
						for pb.Next() {
							if n%turnsPerDialog == 0 {
								d, err := rt.Dialogs().Create(ctx, op, "bench", "bot", dialog.CreateDialogInput{})
								if err != nil {
									b.Error(err)
									return
								}
								dialogID = d.ID
							}
							n++
							turn, err := rt.SendMessage(ctx, op, "bench", dialogID, dialog.SendInput{Text: "Where is my order?"}, nil)
							if err != nil || turn.Done == nil || turn.Done.Text != "Fine, thanks." {
								b.Errorf("turn %+v, %v", turn, err)
								return
							}
						}
					})
					b.ReportMetric(float64(stmts.Load())/float64(b.N), "stmts/turn")
					if hook != nil {
						b.ReportMetric(float64(hook.commands.Load())/float64(b.N), "redis/turn")
						b.ReportMetric(float64(hook.pipelines.Load())/float64(b.N), "flushes/turn")
					}
				})
			}
		}
	}
}

// countTrips counts the round trips to Redis: the commands sent alone
// (the admit script; the day's seed once) and the pipelines (flushes).
type countTrips struct{ commands, pipelines atomic.Int64 }

func (c *countTrips) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *countTrips) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.commands.Add(1)
		return next(ctx, cmd)
	}
}

func (c *countTrips) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.pipelines.Add(1)
		return next(ctx, cmds)
	}
}

// benchRuntime is a runtime over st answering every message with the fake
// LLM at 0 ms, with tenant "bench" and its published bot "bot".
func benchRuntime(b testing.TB, st *store.Store) *dialog.Runtime {
	b.Helper()
	return benchRuntimeWith(b, st, dialog.Options{})
}

// benchRuntimeWith is benchRuntime with opts' limits and shared limiter.
func benchRuntimeWith(b testing.TB, st *store.Store, opts dialog.Options) *dialog.Runtime {
	b.Helper()
	svc := platformtest.New(b, st, platform.Options{Sealer: mustSealer(b)})
	srv := llmtest.NewServer(b, llmtest.Options{Handler: func(*llmtest.ChatRequest) llmtest.ServerReply {
		return llmtest.ServerReply{Text: "Fine, thanks."}
	}})
	provider, err := openai.New(openai.Config{BaseURL: srv.URL(), MaxRetries: -1})
	if err != nil {
		b.Fatal(err)
	}
	opts.Service, opts.Store, opts.Provider, opts.DefaultModel = svc, st, provider, "fake-model"
	rt := dialogtest.New(b, opts)
	ctx, op := context.Background(), platform.Operator()
	if _, _, err := svc.Tenants().Create(ctx, op, platform.CreateTenantInput{Slug: "bench", Name: "Bench"}); err != nil {
		b.Fatal(err)
	}
	if _, _, err := svc.Bots().Create(ctx, op, "bench", "bot", []byte(configV1)); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.Versions().Publish(ctx, op, "bench", "bot", 1); err != nil {
		b.Fatal(err)
	}
	return rt
}

// countStatements counts every statement the store sends through db.
func countStatements(db *gorm.DB) *atomic.Int64 {
	n := &atomic.Int64{}
	watchStatements(db, func(string) { n.Add(1) })
	return n
}

// watchStatements calls seen with the SQL of every statement the store
// sends through db: gorm's own and the store's plain SQL alike report
// each to the logger.
func watchStatements(db *gorm.DB, seen func(sql string)) {
	db.Logger = watchingLogger{Interface: db.Logger, seen: seen}
}

// watchingLogger hands the statements traced through it to seen.
type watchingLogger struct {
	logger.Interface
	seen func(sql string)
}

func (w watchingLogger) LogMode(l logger.LogLevel) logger.Interface {
	return watchingLogger{Interface: w.Interface.LogMode(l), seen: w.seen}
}

func (w watchingLogger) Trace(ctx context.Context, begin time.Time, fc func() (string, int64), err error) {
	sql, _ := fc()
	w.seen(sql)
	w.Interface.Trace(ctx, begin, fc, err)
}
