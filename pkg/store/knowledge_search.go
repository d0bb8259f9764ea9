package store

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode"
)

// KnowledgeHit is a chunk found by a search, with what a citation needs
// of its source.
type KnowledgeHit struct {
	ChunkID     int64
	SourceID    string
	SourceTitle string
	// SourceKind is the source's kind: a file's citation links to the
	// file itself, which has no URL of its own.
	SourceKind string
	URL        string
	Ordinal    int
	Title      string
	Locator    string
	Text       string
}

// keywordTerms splits a query into words as both full-text indexes do
// (letters and digits), so no character a user typed is read as query
// syntax.
func keywordTerms(query string) []string {
	return strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsNumber(r) })
}

// keywordCandidates bounds the chunks PostgreSQL ranks for one query,
// in each of its two sets of candidates (see keywordSearchPostgres).
const keywordCandidates = 300

// KeywordSearch returns the ids of up to limit chunks of the base's
// current generation that hold any word of query, best first: bm25 over
// FTS5 on SQLite, the words' inverse document frequencies then
// ts_rank_cd over the base language's tsvector on PostgreSQL (see
// keywordSearchPostgres). The query is a bag of words on both: nothing
// a user typed is read as query syntax. Only chunks of the sources
// tags keeps.
//
// Ranking reads each match, which at 100,000 chunks and common words
// costs hundreds of milliseconds; so PostgreSQL ranks a bounded set of
// candidates, and SQLite matches a question's rarest words and lets its
// commonest rank those matches (see keywordMatches). A query that so
// many chunks match is a poor keyword query; its vector ranks carry it.
func (k Knowledge) KeywordSearch(ctx context.Context, b *KnowledgeBase, query string, tags TagFilter, limit int) ([]int64, error) {
	scope := " AND c.tenant_id = @tenant AND c.base_id = @base AND c.generation = @gen"
	args := map[string]any{"tenant": k.tenant, "base": b.ID, "gen": b.Generation, "limit": limit, "query": query,
		"lang": b.Language, "tags": tags.Tags, "candidates": keywordCandidates}
	if tags.On() {
		scope += " AND " + tags.condition("c.source_id", "@base", "@tags")
	}
	if k.s.dialect == DialectPostgres {
		var ids []int64
		// The driver prepares statements, and after five runs PostgreSQL may
		// plan them once for any query: not knowing the words, it walks
		// the base's chunks instead of the GIN index (at 10,000 chunks, 70 ms
		// instead of 5). Planning each run costs a fraction of a millisecond.
		err := k.s.Tx(ctx, func(tx *Store) error {
			if err := tx.q(ctx).Exec("SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL enable_seqscan = off").Error; err != nil {
				return err
			}
			var err error
			ids, err = keywordSearchPostgres(ctx, tx, scope, args)
			return err
		})
		return ids, wrap("keyword search knowledge", err)
	}
	words := withoutStopWords(keywordTerms(query), b.Language)
	if len(words) == 0 {
		return nil, nil
	}
	rare, common, err := k.rareWords(ctx, b, words)
	if err != nil {
		return nil, wrap("keyword search knowledge", err)
	}
	// The scope word narrows the match to the base's generation inside
	// the index; its column weighs nothing in the ranking. The common
	// words, ORed with the scope word (which every chunk in scope holds),
	// match nothing more but count in the bm25 of each match. The chunk
	// rows are read for the results only, unless tags need them.
	scopeWord := `{scope}: "` + ftsScope(b.ID, b.Generation) + `"`
	args["query"] = scopeWord + " AND {title text}: (" + ftsAny(rare) + ")"
	if len(common) > 0 {
		args["query"] = args["query"].(string) + " AND ({title text}: (" + ftsAny(common) + ") OR " + scopeWord + ")"
	}
	match := `SELECT f.rowid AS id, bm25(knowledge_chunks_search, 0, 1, 1) AS r FROM knowledge_chunks_search f
WHERE knowledge_chunks_search MATCH @query`
	if tags.On() {
		match = `SELECT f.rowid AS id, bm25(knowledge_chunks_search, 0, 1, 1) AS r FROM knowledge_chunks_search f
JOIN knowledge_chunks c ON c.id = f.rowid WHERE knowledge_chunks_search MATCH @query` + scope
	}
	q := `SELECT c.id FROM (` + match + ` ORDER BY r, id LIMIT @limit) m JOIN knowledge_chunks c ON c.id = m.id
WHERE 1 = 1` + scope + ` ORDER BY m.r, m.id`
	var ids []int64
	err = k.q(ctx).Raw(q, args).Scan(&ids).Error
	return ids, wrap("keyword search knowledge", err)
}

// keywordMatches bounds the chunks SQLite's keyword search matches:
// bm25 reads the positions and the row of sizes of every match, and a
// question's common words ("table", "column") match a good share of a
// base. So its words are matched rarest first while together they are
// expected in at most this many chunks of the base (the rarest always),
// and the rest only rank those matches. A base of 10,000 chunks matches
// nearly every question's words whole; at 100,000, its commonest words
// are left to rank, and keyword search takes about a quarter of the
// CPU it took when it matched them all (docs/performance.md).
const keywordMatches = 10_000

// rareWords splits words into the rare ones a SQLite keyword search
// matches and the common ones it only ranks those matches by (see
// keywordMatches), by the share of the index's chunks holding each.
func (k Knowledge) rareWords(ctx context.Context, b *KnowledgeBase, words []string) (rare, common []string, err error) {
	counts, share, err := k.s.ftsWords.counts(ctx, k.s, b, words)
	if err != nil {
		return nil, nil, err
	}
	words = slices.Clone(words)
	slices.SortStableFunc(words, func(a, b string) int { return cmp.Compare(counts[a], counts[b]) })
	expected := 0.0
	for i, w := range words {
		if expected += counts[w] * share; i > 0 && expected > keywordMatches {
			return words[:i], words[i:], nil
		}
	}
	return words, nil, nil
}

// ftsAny is an FTS5 query matching any of words, each quoted: words
// hold letters and digits only (keywordTerms), so none is read as
// query syntax.
func ftsAny(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = `"` + w + `"`
	}
	return strings.Join(quoted, " OR ")
}

// keywordSearchPostgres ranks the chunks in scope holding the query's
// words (its lexemes in the base's language, stop words dropped) by the
// sum of the weights of the words each holds, then by ts_rank_cd. A
// word's weight is its inverse document frequency, as BM25 weighs it:
// ts_rank_cd alone does not know a word's rarity, and a question's
// common words ("table", "column") outweighed its telling ones.
//
// Counting each word's chunks in the base would read as many rows as it
// matches, so the frequencies are the planner's statistics of the chunk
// table (see wordStats): a vocabulary of every base, as a search
// engine's shared IDF table is. They reveal no row; they only weigh the
// words of the asking tenant's own matches.
//
// Ranking reads each candidate's row, so the candidates are bounded: the
// chunks holding the rarest words, as many words as the statistics say
// match at most keywordCandidates chunks of the table; every chunk
// holding all of the words, up to keywordCandidates; and, when no word
// is that rare, up to keywordCandidates holding any.
func keywordSearchPostgres(ctx context.Context, tx *Store, scope string, args map[string]any) ([]int64, error) {
	var words []string
	err := tx.q(ctx).Raw("SELECT unnest(tsvector_to_array(to_tsvector(CAST(@lang AS regconfig), @query)))", args).Scan(&words).Error
	if err != nil || len(words) == 0 {
		return nil, err
	}
	stats, err := tx.words.get(ctx, tx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(words, func(a, b string) int { return cmp.Compare(stats.share(a), stats.share(b)) })
	var score, every, rare []string
	expected := 0.0
	for i, word := range words {
		f := min(stats.share(word), 0.99)
		l := tsqueryLexeme(word)
		args[fmt.Sprint("l", i)] = l
		score = append(score, fmt.Sprintf("CASE WHEN x.v @@ CAST(@l%d AS tsquery) THEN %g ELSE 0 END", i, math.Log(1+(1-f)/f)))
		every = append(every, l)
		if expected += f * stats.rows; i == 0 || expected <= keywordCandidates {
			rare = append(rare, l)
		}
	}
	args["any"], args["all"], args["rare"] = strings.Join(every, " | "), strings.Join(every, " & "), strings.Join(rare, " | ")
	// Each use of the column would read its out-of-line value again:
	// x.v is it read once (a concatenation, kept from being inlined by
	// OFFSET 0).
	branch := func(match string) string {
		return "SELECT c.id, " + strings.Join(score, " + ") + ` AS r, ts_rank_cd(x.v, CAST(@any AS tsquery)) AS cd
FROM knowledge_chunks c CROSS JOIN LATERAL (SELECT c.tsv || CAST('' AS tsvector) AS v OFFSET 0) x
WHERE c.tsv @@ CAST(` + match + " AS tsquery)" + scope
	}
	q := "(" + branch("@all") + " LIMIT @candidates) UNION ALL (" + branch("@rare") + " LIMIT @candidates)"
	var ids []int64
	err = tx.q(ctx).Raw("SELECT id FROM ("+q+") m GROUP BY id ORDER BY MAX(r) DESC, MAX(cd) DESC, id LIMIT @limit", args).Scan(&ids).Error
	return ids, err
}

// tsqueryLexeme quotes a lexeme for tsquery input, so it is matched as
// it is, not parsed again.
func tsqueryLexeme(l string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(l, `\`, `\\`), "'", "''") + "'"
}

// ftsScope is the word knowledge_chunks.scope holds for a base's
// generation on SQLite (see migrateV25).
func ftsScope(baseID string, gen int64) string {
	return fmt.Sprintf("kb%sg%d", strings.ReplaceAll(baseID, "_", ""), gen)
}

// TagFilter keeps chunks by the tags of their source: with Tags, those
// of sources carrying one of them; with Untagged, also those of sources
// carrying none. The zero value keeps every chunk.
type TagFilter struct {
	Tags     []string
	Untagged bool
}

// On reports whether f drops anything.
func (f TagFilter) On() bool { return len(f.Tags) > 0 || f.Untagged }

// condition is f as SQL on the source id column col, with base and tags
// the statement's placeholders for the base id and the tag list (tags is
// left out of a filter without Tags).
func (f TagFilter) condition(col, base, tags string) string {
	tagged := col + " IN (SELECT source_id FROM knowledge_source_tags WHERE base_id = " + base + " AND tag IN " + tags + ")"
	untagged := col + " NOT IN (SELECT source_id FROM knowledge_source_tags WHERE base_id = " + base + ")"
	switch {
	case len(f.Tags) > 0 && f.Untagged:
		return "(" + tagged + " OR " + untagged + ")"
	case f.Untagged:
		return untagged
	default:
		return tagged
	}
}

// FilteredSources returns the ids of the base's sources that f keeps.
func (k Knowledge) FilteredSources(ctx context.Context, baseID string, f TagFilter) ([]string, error) {
	var ids []string
	err := k.q(ctx).Raw(`SELECT s.id FROM knowledge_sources s WHERE s.tenant_id = @tenant AND s.base_id = @base AND `+
		f.condition("s.id", "@base", "@tags"), map[string]any{"tenant": k.tenant, "base": baseID, "tags": f.Tags}).Scan(&ids).Error
	return ids, wrap("filtered knowledge sources", err)
}

// EachVector calls fn with every vector of the base's generation gen and
// the chunk and source it belongs to, in chunk order; with sources, only
// the vectors of those. vec is reused between calls.
func (k Knowledge) EachVector(ctx context.Context, baseID string, gen int64, sources []string, fn func(chunkID int64, sourceID string, vec []float32)) error {
	q := `SELECT e.chunk_id, c.source_id, e.embedding FROM knowledge_embeddings e JOIN knowledge_chunks c ON c.id = e.chunk_id
WHERE c.tenant_id = ? AND e.base_id = ? AND e.generation = ?`
	args := []any{k.tenant, baseID, gen}
	if sources != nil {
		q += " AND c.source_id IN ?"
		args = append(args, sources)
	}
	rows, err := k.q(ctx).Raw(q+" ORDER BY e.chunk_id", args...).Rows()
	if err != nil {
		return wrap("read knowledge vectors", err)
	}
	defer rows.Close()
	var (
		id   int64
		src  string
		blob []byte
		vec  []float32
	)
	for rows.Next() {
		if err := rows.Scan(&id, &src, &blob); err != nil {
			return wrap("read knowledge vectors", err)
		}
		vec = DecodeVector(vec, blob)
		fn(id, src, vec)
	}
	return wrap("read knowledge vectors", rows.Err())
}

// Hits returns the chunks ids of the base with their sources, in no
// particular order; ids not in the base are left out.
func (k Knowledge) Hits(ctx context.Context, baseID string, ids []int64) ([]KnowledgeHit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// SQLite, without statistics, would find the chunks by the base's
	// index and read every chunk of the base (60 ms at 100,000) instead
	// of looking up the few ids; NOT INDEXED leaves it the primary key.
	chunks := "knowledge_chunks c"
	if k.s.dialect == DialectSQLite {
		chunks += " NOT INDEXED"
	}
	var out []KnowledgeHit
	err := k.q(ctx).Raw(`SELECT c.id AS chunk_id, c.source_id, s.title AS source_title, s.kind AS source_kind, s.url, c.ordinal, c.title, c.locator, c.text
FROM `+chunks+` JOIN knowledge_sources s ON s.id = c.source_id
WHERE c.tenant_id = ? AND c.base_id = ? AND c.id IN ?`, k.tenant, baseID, ids).Scan(&out).Error
	return out, wrap("read knowledge hits", err)
}

// IndexedSources returns when each of the base's indexed sources last
// had its chunks written, by source id: a source whose time moved on has
// new chunks, one missing has none (deleted, or never indexed).
func (k Knowledge) IndexedSources(ctx context.Context, baseID string) (map[string]time.Time, error) {
	var rows []struct {
		ID        string
		IndexedAt time.Time
	}
	err := k.q(ctx).Raw("SELECT id, indexed_at FROM knowledge_sources WHERE tenant_id = ? AND base_id = ? AND indexed_at IS NOT NULL",
		k.tenant, baseID).Scan(&rows).Error
	if err != nil {
		return nil, wrap("indexed knowledge sources", err)
	}
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		out[r.ID] = r.IndexedAt
	}
	return out, nil
}
