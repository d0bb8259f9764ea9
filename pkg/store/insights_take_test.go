package store_test

import (
	"testing"
	"time"

	"github.com/parleyhq/parley/pkg/store"
)

func TestTakeMedianIsTheBoundOfTheMiddleBucket(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		waits []time.Duration
		want  time.Duration // 0: no median
	}{
		{"no takes have none", nil, 0},
		{"a wait on a bound counts under it", []time.Duration{30 * time.Second}, 30 * time.Second},
		{"of three the middle one's bucket", []time.Duration{45 * time.Second, 3 * time.Minute, 10 * time.Minute}, 5 * time.Minute},
		{"of two the lower one's bucket", []time.Duration{10 * time.Second, 2 * time.Hour}, 30 * time.Second},
		{"more than half over a day have none", []time.Duration{time.Minute, 25 * time.Hour, 48 * time.Hour}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var counts store.TakeCounts
			for _, w := range c.waits {
				counts.Count(w)
			}
			got, ok := counts.Median(int64(len(c.waits)))
			if ok != (c.want != 0) || got != c.want {
				t.Fatalf("median %v (%v), want %v", got, ok, c.want)
			}
		})
	}
}
