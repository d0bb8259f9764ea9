package store

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// wordStatsAge is how long the chunk words' statistics are kept before
// they are read again: autovacuum's ANALYZE renews them far less often.
const wordStatsAge = time.Minute

// wordStats keeps what PostgreSQL's planner knows of the words of
// knowledge chunks (pg_stats of knowledge_chunks.tsv), which the keyword
// search weighs words by. Reading pg_stats costs milliseconds, more than
// the search it serves.
type wordStats struct {
	mu   sync.Mutex
	read time.Time
	// freq is the share of chunks holding each of the commonest words;
	// least is the smallest share listed (0: no statistics).
	freq  map[string]float64
	least float64
	// rows is the planner's estimate of the table's chunks.
	rows float64
}

// get returns the statistics, read again when older than wordStatsAge.
func (w *wordStats) get(ctx context.Context, s *Store) (*wordStats, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.read) < wordStatsAge {
		return w, nil
	}
	var rows []struct {
		Elems string
		Freqs string
	}
	err := s.q(ctx).Raw(`SELECT array_to_json(most_common_elems::text::text[]) AS elems, array_to_json(most_common_elem_freqs) AS freqs
FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'knowledge_chunks' AND attname = 'tsv'
AND most_common_elems IS NOT NULL`).Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	if err := s.q(ctx).Raw("SELECT GREATEST(reltuples, 0) FROM pg_class WHERE oid = CAST('knowledge_chunks' AS regclass)").Scan(&w.rows).Error; err != nil {
		return nil, err
	}
	w.freq, w.least = map[string]float64{}, 0
	if len(rows) == 1 {
		var elems []string
		var freqs []float64
		if json.Unmarshal([]byte(rows[0].Elems), &elems) == nil && json.Unmarshal([]byte(rows[0].Freqs), &freqs) == nil && len(freqs) > len(elems) {
			// After one share per word come the least and the greatest.
			for i, e := range elems {
				w.freq[e] = freqs[i]
			}
			w.least = freqs[len(elems)]
		}
	}
	w.read = time.Now()
	return w, nil
}

// share is the estimated share of chunks holding word: half the least
// listed for a word too rare to be listed, and one half for every word
// without statistics, so that all weigh the same.
func (w *wordStats) share(word string) float64 {
	if f, ok := w.freq[word]; ok {
		return f
	}
	if w.least > 0 {
		return w.least / 2
	}
	return 0.5
}
