package store

import (
	"context"
	"sync"
	"time"
)

// ftsWordCounts caches how many chunks of SQLite's keyword index hold
// each word of recent queries, how many chunks it holds, and how many
// each base's current generation holds: the keyword search matches a
// question's rarest words by them and leaves the commonest to rank
// (see Knowledge.rareWords). Like PostgreSQL's statistics (wordStats)
// the words are counted over every base: a vocabulary that weighs
// words and shows no row. Counting a word reads its postings, about a
// millisecond for one in 10,000 chunks; a minute old is fresh enough.
type ftsWordCounts struct {
	mu    sync.Mutex
	rows  ftsCount
	bases map[string]ftsCount // by base and generation (ftsScope)
	words map[string]ftsCount
}

type ftsCount struct {
	n    float64
	read time.Time
}

// maxCountedWords bounds the cache of words (and of bases); past it, it
// starts again.
const maxCountedWords = 10_000

// counts returns how many of the index's chunks hold each of words, and
// the share of the index's chunks that are base's (to make the one the
// other's expected matches in the base).
func (w *ftsWordCounts) counts(ctx context.Context, s *Store, b *KnowledgeBase, words []string) (map[string]float64, float64, error) {
	now := time.Now()
	fresh := func(c ftsCount, ok bool) bool { return ok && now.Sub(c.read) < wordStatsAge }
	scope := ftsScope(b.ID, b.Generation)
	counts := map[string]float64{}
	var missing []string
	w.mu.Lock()
	rows, rowsFresh := w.rows, fresh(w.rows, !w.rows.read.IsZero())
	base, baseFresh := w.bases[scope]
	baseFresh = fresh(base, baseFresh)
	for _, word := range words {
		if c, ok := w.words[word]; fresh(c, ok) {
			counts[word] = c.n
		} else {
			missing = append(missing, word)
		}
	}
	w.mu.Unlock()
	if !rowsFresh {
		if err := s.q(ctx).Raw("SELECT count(*) FROM knowledge_chunks").Scan(&rows.n).Error; err != nil {
			return nil, 0, err
		}
		rows.read = now
	}
	if !baseFresh {
		err := s.q(ctx).Raw("SELECT count(*) FROM knowledge_chunks WHERE base_id = ? AND generation = ?", b.ID, b.Generation).Scan(&base.n).Error
		if err != nil {
			return nil, 0, err
		}
		base.read = now
	}
	read := map[string]float64{}
	for _, word := range missing {
		var n float64
		err := s.q(ctx).Raw("SELECT count(*) FROM knowledge_chunks_search WHERE knowledge_chunks_search MATCH ?",
			`{title text}: "`+word+`"`).Scan(&n).Error
		if err != nil {
			return nil, 0, err
		}
		counts[word], read[word] = n, n
	}
	w.mu.Lock()
	w.rows = rows
	if w.bases == nil || len(w.bases) >= maxCountedWords {
		w.bases = map[string]ftsCount{}
	}
	w.bases[scope] = base
	if w.words == nil || len(w.words)+len(read) > maxCountedWords {
		w.words = map[string]ftsCount{}
	}
	for word, n := range read {
		w.words[word] = ftsCount{n: n, read: now}
	}
	w.mu.Unlock()
	return counts, base.n / max(rows.n, 1), nil
}
