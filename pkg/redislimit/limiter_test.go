package redislimit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// localRedis is the Redis the tests share (CI starts it: .ci/run).
const localRedis = "redis://127.0.0.1:6379/0"

// openTest returns a Limiter on the local Redis with keys of its own,
// marked up, or skips the test when no Redis answers there.
func openTest(t *testing.T, prefix string) *Limiter {
	t.Helper()
	c, err := net.DialTimeout("tcp", "127.0.0.1:6379", time.Second)
	if err != nil {
		t.Skip("no Redis answers on 127.0.0.1:6379 (start redis-server; CI does): ", err)
	}
	c.Close()
	l, err := Open(localRedis, Options{Prefix: prefix, Clock: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	l.probe(context.Background())
	if !l.Up() {
		t.Fatal("the local Redis does not answer PING")
	}
	return l
}

func testPrefix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return "parleytest:" + hex.EncodeToString(b) + ":"
}

var t0 = time.Date(2030, 1, 2, 12, 0, 0, 0, time.UTC)

func admit(t *testing.T, l *Limiter, q Request) Decision {
	t.Helper()
	d, err := l.Admit(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestRates(t *testing.T) {
	t.Parallel()
	t.Run("a burst passes on any server, the next request waits an interval", func(t *testing.T) {
		prefix := testPrefix()
		a, b := openTest(t, prefix), openTest(t, prefix) // two servers
		q := Request{Now: t0, Tenant: "t1", TenantRate: Rate{PerSecond: 2, Burst: 3}}
		for i, l := range []*Limiter{a, b, a} {
			if d := admit(t, l, q); d.Refused != Passed {
				t.Fatalf("request %d of the burst: refused %v", i+1, d.Refused)
			}
		}
		d := admit(t, b, q)
		if d.Refused != TenantRate || d.RetryAfter != 500*time.Millisecond {
			t.Fatalf("fourth request: %+v, want refused by the tenant's rate for 500ms", d)
		}
		q.Now = t0.Add(500 * time.Millisecond)
		if d := admit(t, a, q); d.Refused != Passed {
			t.Fatalf("after the interval: %+v", d)
		}
	})
	t.Run("a key over its rate spends none of its tenant's", func(t *testing.T) {
		l := openTest(t, testPrefix())
		q := Request{Now: t0, Tenant: "t1", Key: "k1", KeyRate: Rate{PerSecond: 1, Burst: 1}, TenantRate: Rate{PerSecond: 1, Burst: 2}}
		admit(t, l, q)
		for range 5 {
			if d := admit(t, l, q); d.Refused != KeyRate {
				t.Fatalf("%+v, want refused by the key's rate", d)
			}
		}
		q.Key = "k2"
		if d := admit(t, l, q); d.Refused != Passed {
			t.Fatalf("another key of the tenant: %+v", d)
		}
	})
	t.Run("tenants are counted apart", func(t *testing.T) {
		l := openTest(t, testPrefix())
		admit(t, l, Request{Now: t0, Tenant: "t1", TenantRate: Rate{PerSecond: 1, Burst: 1}})
		if d := admit(t, l, Request{Now: t0, Tenant: "t2", TenantRate: Rate{PerSecond: 1, Burst: 1}}); d.Refused != Passed {
			t.Fatalf("t2 paid for t1: %+v", d)
		}
	})
}

func TestStreams(t *testing.T) {
	t.Parallel()
	q := func(stream string, now time.Time) Request {
		return Request{Now: now, Tenant: "t1", MaxStreams: 2, Stream: stream}
	}
	t.Run("a tenant runs at most its streams across servers; a released one is free again", func(t *testing.T) {
		prefix := testPrefix()
		a, b := openTest(t, prefix), openTest(t, prefix)
		admit(t, a, q("s1", t0))
		admit(t, b, q("s2", t0))
		if d := admit(t, a, q("s3", t0)); d.Refused != StreamsBusy || d.RetryAfter <= 0 {
			t.Fatalf("third stream: %+v, want refused as busy with a retry", d)
		}
		b.Release("t1", "s2")
		b.flush(context.Background())
		if d := admit(t, a, q("s3", t0)); d.Refused != Passed {
			t.Fatalf("after a release: %+v", d)
		}
	})
	t.Run("a dead server's streams are free after their lease; a live one's are renewed", func(t *testing.T) {
		prefix := testPrefix()
		now := t0
		live, err := Open(localRedis, Options{Prefix: prefix, StreamTTL: 30 * time.Second, Clock: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		defer live.Close()
		live.probe(context.Background())
		dead := openTest(t, prefix)
		admit(t, dead, q("dead", t0))
		admit(t, live, q("live", t0))
		now = t0.Add(20 * time.Second)
		live.flush(context.Background()) // renews "live" to now+30s
		if d := admit(t, live, q("new", t0.Add(31*time.Second))); d.Refused != Passed {
			t.Fatalf("the dead server's stream still counts: %+v", d)
		}
		if d := admit(t, live, q("more", t0.Add(31*time.Second))); d.Refused != StreamsBusy {
			t.Fatalf("the live server's renewed stream was dropped: %+v", d)
		}
	})
}

func TestAFlushWithNothingEndedKeepsRedisUp(t *testing.T) {
	t.Parallel()
	l := openTest(t, testPrefix())
	l.ended[l.streamsKey("t1")] = nil // what a failed Admit with no ended streams once left
	l.AddTokens("t1", "2030-01-02", 1)
	l.flush(context.Background())
	if !l.Up() {
		t.Fatal("an empty ZREM failed the flush and marked Redis down")
	}
}

func TestQuota(t *testing.T) {
	t.Parallel()
	t.Run("tokens one server uses count on every server", func(t *testing.T) {
		prefix := testPrefix()
		a, b := openTest(t, prefix), openTest(t, prefix)
		q := Request{Now: t0, Tenant: "t1", Day: "2030-01-02", Quota: 100}
		if d := admit(t, a, q); d.Refused != Unseeded {
			t.Fatalf("an empty Redis: %+v, want unseeded", d)
		}
		if v, err := a.Seed(context.Background(), "t1", "2030-01-02", 40, t0); err != nil || v != 40 {
			t.Fatalf("seed: %d, %v", v, err)
		}
		if v, _ := b.Seed(context.Background(), "t1", "2030-01-02", 0, t0); v != 40 {
			t.Fatalf("a second seed replaced the first: %d", v)
		}
		a.AddTokens("t1", "2030-01-02", 50)
		if d := admit(t, a, q); d.Refused != Passed || d.Used != 90 {
			t.Fatalf("with 50 tokens unwritten: %+v, want passed with 90 used", d)
		}
		a.AddTokens("t1", "2030-01-02", 15)
		a.flush(context.Background())
		if d := admit(t, b, q); d.Refused != QuotaUsed || d.Used != 105 {
			t.Fatalf("on the other server: %+v, want the quota used at 105", d)
		}
		if used, ok := a.Used("t1", "2030-01-02", t0); !ok || used != 105 {
			t.Fatalf("Used: %d %v", used, ok)
		}
	})
	t.Run("tokens for a counter Redis lost are not counted from zero", func(t *testing.T) {
		l := openTest(t, testPrefix())
		l.AddTokens("t1", "2030-01-02", 50)
		l.flush(context.Background())
		if d := admit(t, l, Request{Now: t0, Tenant: "t1", Day: "2030-01-02", Quota: 100}); d.Refused != Unseeded {
			t.Fatalf("%+v, want unseeded", d)
		}
	})
}

func TestDown(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing answers there now
	reg := prometheus.NewRegistry()
	l, err := Open("redis://"+addr, Options{Metrics: reg})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.probe(context.Background())
	if l.Up() {
		t.Fatal("up without a Redis")
	}
	if _, err := l.Admit(context.Background(), Request{Now: t0, Tenant: "t1"}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Admit: %v, want ErrUnavailable", err)
	}
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || families[0].GetName() != "parley_redis_up" || families[0].GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Fatalf("metrics %v, %v; want parley_redis_up 0", families, err)
	}
	if _, err := Open("http://"+addr, Options{}); err == nil {
		t.Fatal("an http URL was taken for Redis")
	}
}
