package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/api/apiclient"
	"github.com/parleyhq/parley/pkg/llm"
	"github.com/parleyhq/parley/pkg/llm/llmtest"
	"github.com/parleyhq/parley/pkg/longtest"
	"github.com/redis/go-redis/v9"
)

// redisServer is a redis-server process of one test, on a port of its
// own, so the test can stop it and start it again.
type redisServer struct {
	port   int
	cmd    *exec.Cmd
	exited chan struct{}
}

// startRedis starts redis-server on a free port, keeping nothing on disk,
// and waits until it answers. It skips the test when redis-server is not
// installed (CI installs it: .ci/run).
func startRedis(t *testing.T) *redisServer {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (apt-get install redis-server; CI has it): ", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &redisServer{port: ln.Addr().(*net.TCPAddr).Port}
	ln.Close()
	r.start(t)
	t.Cleanup(r.stop)
	return r
}

func (r *redisServer) URL() string { return fmt.Sprintf("redis://127.0.0.1:%d/0", r.port) }

// start runs redis-server on r's port and waits until it answers PING.
func (r *redisServer) start(t *testing.T) {
	t.Helper()
	r.cmd = exec.Command("redis-server", "--port", fmt.Sprint(r.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", t.TempDir())
	r.exited = make(chan struct{})
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.cmd.Wait(); close(r.exited) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", r.port))
		if err == nil {
			fmt.Fprint(c, "PING\r\n")
			buf := make([]byte, 7)
			_, err = io.ReadFull(c, buf)
			c.Close()
			if err == nil && string(buf) == "+PONG\r\n" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server on port %d did not answer: %v", r.port, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills redis-server, as a crash would, and waits until it is gone;
// what it held is lost.
func (r *redisServer) stop() {
	select {
	case <-r.exited:
		return
	default:
	}
	r.cmd.Process.Kill()
	<-r.exited
}

// redisTrio starts redis and three servers sharing it and one PostgreSQL,
// with env (rates, quota) added to their settings, answering with a fake
// model whose every reply uses 10 tokens; it returns the servers, the
// tenant's key and a dialog.
func redisTrio(t *testing.T, env parleyEnv) (*redisServer, []*process, string, string) {
	t.Helper()
	red := startRedis(t)
	env["PARLEY_REDIS_URL"] = red.URL()
	log := &modelLog{fake: llmtest.NewHandler(llmtest.Options{APIKey: "sk-e2e",
		Handler: func(req *llmtest.ChatRequest) llmtest.ServerReply {
			return llmtest.ServerReply{Text: "re: " + req.LastUserText(), Usage: &llm.Usage{InputTokens: 6, OutputTokens: 4}}
		}})}
	servers := startServers(t, log, env, 3)
	key, d := setupDialog(t, servers[0].URL)
	return red, servers, key, d
}

// send posts text to the dialog on server and returns nil, the API error
// that refused it, or fails the test on anything else.
func send(t *testing.T, server *process, key, dialog, text string) *apiclient.Error {
	t.Helper()
	_, err := apiclient.New(server.URL, key).SendMessage(context.Background(), "acme", dialog, text)
	var e *apiclient.Error
	if err == nil || errors.As(err, &e) {
		return e
	}
	t.Fatal(err)
	return nil
}

// acceptedOf sends n messages to the dialog one after another, round
// robin over the servers, and counts those answered; any refusal but 429
// fails the test.
func acceptedOf(t *testing.T, servers []*process, key, dialog string, n int, label string) int {
	t.Helper()
	ok := 0
	for i := range n {
		switch e := send(t, servers[i%len(servers)], key, dialog, fmt.Sprintf("%s %d", label, i)); {
		case e == nil:
			ok++
		case e.Status != http.StatusTooManyRequests:
			t.Fatalf("message %d: %v, want an answer or 429", i, e)
		}
	}
	return ok
}

// TestThreeServersShareOneTenantRate: with PARLEY_REDIS_URL, a tenant's
// burst is its burst across every server, not on each. The rate refills
// one message an hour, so the count does not depend on how fast the test
// runs: three servers counting apart would let 3×burst through.
func TestThreeServersShareOneTenantRate(t *testing.T) {
	t.Parallel()
	const burst = 4
	_, servers, key, d := redisTrio(t, parleyEnv{"PARLEY_RATE_LIMIT_TENANT": fmt.Sprintf("1/h,burst=%d", burst)})
	if got := acceptedOf(t, servers, key, d, 3*burst+3, "hello"); got != burst {
		t.Fatalf("three servers answered %d messages, want the tenant's burst %d in total", got, burst)
	}
}

// TestAQuotaReachedOnOneServerIsReachedOnAll: the daily token quota is
// counted in Redis as it is used, so the other servers refuse within a
// second of the turn that used it up, having never served the tenant.
// The database would refuse too, once the server that answered wrote its
// usage (every second), so the test then shows that the servers ask
// Redis: with Redis's counter for the day set back to zero they answer,
// although the database holds more than the quota.
func TestAQuotaReachedOnOneServerIsReachedOnAll(t *testing.T) {
	t.Parallel()
	const quota = 25
	red, servers, key, d := redisTrio(t, parleyEnv{"PARLEY_DAILY_TOKEN_QUOTA": fmt.Sprint(quota)})
	for i := range 3 { // 10 tokens each: the third passes at 20 and ends at 30
		if e := send(t, servers[0], key, d, fmt.Sprint("spend ", i)); e != nil {
			t.Fatalf("message %d within the quota: %v", i, e)
		}
	}
	used := time.Now()
	spent := int64(30)
	for _, s := range servers[1:] {
		deadline := used.Add(time.Second)
		for {
			e := send(t, s, key, d, "one more")
			if e != nil && e.Status == http.StatusTooManyRequests && strings.Contains(e.Message, "daily token quota") {
				break
			}
			if e == nil { // admitted before the last turn's tokens reached Redis (flushed every 100 ms)
				spent += 10
			}
			if time.Now().After(deadline) {
				t.Fatalf("server %s still answers (%v) a second after the quota was used on another", s.URL, e)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Logf("the other servers refused %s after the quota was used", time.Since(used).Round(time.Millisecond))

	ctx := context.Background()
	tenant, err := apiclient.New(servers[0].URL, key).GetTenant(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	opts, err := redis.ParseURL(red.URL())
	if err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(opts)
	defer rc.Close()
	counter := "parley:tokens:{" + tenant.ID + "}:" + time.Now().UTC().Format(time.DateOnly)
	// The servers add each turn's tokens to Redis within 100 ms of it.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := rc.Get(ctx, counter).Int64()
		if err == nil && n == spent {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Redis counts %d tokens for the day (%v), want the %d used", n, err, spent)
		}
	}
	waitStoredTokens(t, servers[2], key, spent)
	if err := rc.Set(ctx, counter, 0, time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if e := send(t, s, key, d, "counted in Redis"); e != nil {
			t.Fatalf("server %s refused (%v) with Redis's counter at 0: it did not ask Redis", s.URL, e)
		}
	}
}

// waitStoredTokens waits until the tenant's usage of the day, as server
// reads it from the database, is at least n tokens.
func waitStoredTokens(t *testing.T, server *process, key string, n int64) {
	t.Helper()
	day := time.Now().UTC().Format(time.DateOnly)
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := apiclient.New(server.URL, key).Usage(context.Background(), "acme", day, day, "day")
		if err != nil {
			t.Fatal(err)
		}
		var stored int64
		for _, row := range r.Usage {
			stored += row.InputTokens + row.OutputTokens
		}
		if stored >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database holds %d tokens of the day, want %d", stored, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServersKeepAnsweringWhileRedisIsDownAndShareAgainWhenItReturns:
// Redis is killed mid-run. The servers go on answering, counting limits
// each on its own (fail open), say so on /readyz and in parley_redis_up,
// and share them again once Redis is back, although it lost every count.
// Each round limits a new API key, so it starts with fresh buckets in
// Redis and in every server; the long run kills Redis five times.
func TestServersKeepAnsweringWhileRedisIsDownAndShareAgainWhenItReturns(t *testing.T) {
	t.Parallel()
	const burst = 4
	red, servers, admin, d := redisTrio(t, parleyEnv{"PARLEY_RATE_LIMIT_KEY": fmt.Sprintf("1/h,burst=%d", burst)})
	newKey := func(name string) string {
		k, err := apiclient.New(servers[0].URL, admin).CreateAPIKey(context.Background(), "acme", apiclient.CreateAPIKeyRequest{Name: name, Scopes: []string{"chat"}})
		if err != nil {
			t.Fatal(err)
		}
		return k.Key
	}
	for round := range longtest.Pick(1, 5) {
		label := fmt.Sprintf("round %d", round)
		waitRedis(t, servers, "up")
		if got := acceptedOf(t, servers, newKey(label+" shared"), d, 3*burst, label+" shared"); got != burst {
			t.Fatalf("%s: with Redis up, %d messages answered, want the key's burst %d across servers", label, got, burst)
		}
		red.stop()
		// Each server finds Redis gone on its first request and counts on
		// its own: a burst per server.
		if got := acceptedOf(t, servers, newKey(label+" alone"), d, 3*burst, label+" alone"); got != 3*burst {
			t.Fatalf("%s: with Redis down, %d of %d messages answered; each server should count its own burst", label, got, 3*burst)
		}
		waitRedis(t, servers, "down")
		red.start(t)
	}
	waitRedis(t, servers, "up")
	if got := acceptedOf(t, servers, newKey("back"), d, 3*burst, "back"); got != burst {
		for _, s := range servers {
			t.Log(s.stderr.String()) // why a server counted on its own
		}
		t.Fatalf("after Redis returned, %d messages answered, want the burst %d shared again", got, burst)
	}
	t.Run("parley_redis_up says where limits are counted", func(t *testing.T) {
		for _, s := range servers {
			resp, err := http.Get(s.URL + "/metrics")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), "\nparley_redis_up 1\n") {
				t.Fatalf("%s/metrics has no parley_redis_up 1", s.URL)
			}
		}
	})
}

// waitRedis waits until every server's /readyz says Redis is state.
func waitRedis(t *testing.T, servers []*process, state string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() {
			for {
				var h apiclient.Health
				err := apiclient.New(s.URL, "").Do(context.Background(), http.MethodGet, "/readyz", nil, &h)
				if err == nil && h.Redis == state {
					return
				}
				if time.Now().After(deadline) {
					t.Errorf("%s/readyz: %+v, %v; want redis %q", s.URL, h, err, state)
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
}
