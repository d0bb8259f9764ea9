package redislimit

import (
	"context"
	"strconv"
	"testing"
	"time"
)

// BenchmarkAdmit is one message's round trip with every limit on: the
// key's and the tenant's rates, a stream lease and the daily quota.
func BenchmarkAdmit(b *testing.B) {
	l, err := Open(localRedis, Options{Prefix: testPrefix()})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	l.probe(context.Background())
	if !l.Up() {
		b.Skip("no Redis answers on 127.0.0.1:6379")
	}
	if _, err := l.Seed(context.Background(), "t1", "2030-01-02", 0, time.Now()); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		id := strconv.Itoa(i)
		d, err := l.Admit(context.Background(), Request{Now: time.Now(), Tenant: "t1", Key: "k1",
			KeyRate: Rate{PerSecond: 1e6, Burst: 1e6}, TenantRate: Rate{PerSecond: 1e6, Burst: 1e6},
			MaxStreams: 1 << 30, Stream: id, Day: "2030-01-02", Quota: 1 << 40})
		if err != nil || d.Refused != Passed {
			b.Fatalf("%+v %v", d, err)
		}
		l.Release("t1", id)
	}
}
