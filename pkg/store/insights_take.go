package store

import "time"

// TakeBuckets are the upper bounds of the rollup's buckets of the time
// handed-off dialogs waited for an operator (TakeCounts).
var TakeBuckets = [...]time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute, 15 * time.Minute,
	time.Hour, 24 * time.Hour}

// TakeCounts counts handoffs by how long they waited until an operator
// took them, one counter per TakeBuckets bound: a wait is counted under
// the first bound it does not exceed, one longer than the last in none.
type TakeCounts struct {
	LE30s int64 `gorm:"column:take_le_30s"`
	LE1m  int64 `gorm:"column:take_le_1m"`
	LE2m  int64 `gorm:"column:take_le_2m"`
	LE5m  int64 `gorm:"column:take_le_5m"`
	LE15m int64 `gorm:"column:take_le_15m"`
	LE1h  int64 `gorm:"column:take_le_1h"`
	LE24h int64 `gorm:"column:take_le_24h"`
}

// counters are c's counters in TakeBuckets' order.
func (c *TakeCounts) counters() [len(TakeBuckets)]*int64 {
	return [...]*int64{&c.LE30s, &c.LE1m, &c.LE2m, &c.LE5m, &c.LE15m, &c.LE1h, &c.LE24h}
}

// Count counts one wait of took.
func (c *TakeCounts) Count(took time.Duration) {
	for i, n := range c.counters() {
		if took <= TakeBuckets[i] {
			*n++
			return
		}
	}
}

func (c *TakeCounts) plus(o *TakeCounts) {
	mine, theirs := c.counters(), o.counters()
	for i := range mine {
		*mine[i] += *theirs[i]
	}
}

// Median is the bound of the bucket that holds the median of takes
// waits (the total counted, longer ones included): at least half of
// them waited at most that long. ok is false without waits, or when
// more than half waited longer than the last bound.
func (c *TakeCounts) Median(takes int64) (bound time.Duration, ok bool) {
	var seen int64
	for i, n := range c.counters() {
		seen += *n
		if takes > 0 && 2*seen >= takes {
			return TakeBuckets[i], true
		}
	}
	return 0, false
}
