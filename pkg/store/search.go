package store

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"gorm.io/gorm"
)

// Feedback filters of DialogFilter.Feedback besides the ratings.
const (
	FeedbackAny  = "any"  // dialogs with any feedback
	FeedbackNone = "none" // dialogs without feedback
)

// searchTerms splits a search into the words every matching message must
// hold. Both full-text indexes drop punctuation and case alike, so a word
// is what lies between spaces.
func searchTerms(query string) []string {
	return strings.FieldsFunc(query, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
}

// matchingMessages narrows q, over messages aliased m, to those holding
// every term, through the dialect's full-text index.
func (s *Store) matchingMessages(q *gorm.DB, terms []string) *gorm.DB {
	if s.dialect == DialectPostgres {
		return q.Where("to_tsvector('simple', m.text) @@ plainto_tsquery('simple', ?)", strings.Join(terms, " "))
	}
	// FTS5 reads a quoted string as one phrase of plain words: no operator
	// a user typed can change the query's meaning.
	quoted := make([]string, len(terms))
	for i, t := range terms {
		quoted[i] = `"` + t + `"`
	}
	return q.Where("m.rowid IN (SELECT rowid FROM messages_search WHERE messages_search MATCH ?)", strings.Join(quoted, " "))
}

// filter narrows q, over the tenant's dialogs, to those matching f.
func (di Dialogs) filter(q *gorm.DB, f DialogFilter) *gorm.DB {
	s, tenantID := di.s, di.tenant
	q = q.Where("tenant_id = ?", tenantID)
	if f.BotID != "" {
		q = q.Where("bot_id = ?", f.BotID)
	}
	if f.Status != "" {
		q = q.Where("status = ?", f.Status)
	}
	if f.UserID != "" {
		q = q.Where("user_id = ?", f.UserID)
	}
	if f.ParentDialogID != "" {
		q = q.Where("parent_dialog_id = ?", f.ParentDialogID)
	}
	if f.Outcome != "" {
		q = q.Where("outcome = ?", f.Outcome)
	}
	if f.Label != "" {
		// labels is a JSON array of strings whose quotes are escaped, so
		// a quoted label matches whole labels only.
		q = q.Where(s.containsSQL("labels"), quoteJSON(f.Label))
	}
	if !f.From.IsZero() {
		q = q.Where("created_at >= ?", f.From.UTC())
	}
	if !f.To.IsZero() {
		q = q.Where("created_at < ?", f.To.UTC())
	}
	switch f.Feedback {
	case "":
	case FeedbackAny:
		q = q.Where("id IN (SELECT dialog_id FROM message_feedback WHERE tenant_id = ?)", tenantID)
	case FeedbackNone:
		q = q.Where("id NOT IN (SELECT dialog_id FROM message_feedback WHERE tenant_id = ?)", tenantID)
	default:
		q = q.Where("id IN (SELECT dialog_id FROM message_feedback WHERE tenant_id = ? AND rating = ?)", tenantID, f.Feedback)
	}
	if terms := searchTerms(f.Query); len(terms) > 0 {
		sub := s.matchingMessages(s.db.Table("messages m").Select("m.dialog_id").Where("m.tenant_id = ?", tenantID), terms)
		q = q.Where("id IN (?)", sub)
	}
	return q
}

// DialogSummary is what a list of dialogs shows of each: a snippet (the
// first message matching the search, else the first user message) and
// counts.
type DialogSummary struct {
	Snippet      string
	Messages     int64
	ToolErrors   int64
	FeedbackUp   int64
	FeedbackDown int64
}

// snippetRunes bounds a snippet.
const snippetRunes = 160

// Summarize returns the summaries of the tenant's dialogs ids (a
// page of a list), their snippets chosen by the search query ("" for
// none). Each query reads only those dialogs' rows.
func (di Dialogs) Summarize(ctx context.Context, ids []string, query string) (map[string]*DialogSummary, error) {
	s, tenantID := di.s, di.tenant
	out := make(map[string]*DialogSummary, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	for _, id := range ids {
		out[id] = &DialogSummary{}
	}
	var counts []struct {
		DialogID string
		Kind     string
		N        int64
	}
	counted := []struct {
		query string
		add   func(s *DialogSummary, kind string, n int64)
	}{
		{`SELECT dialog_id, '' AS kind, COUNT(*) AS n FROM messages WHERE tenant_id = ? AND dialog_id IN ? AND kind IN ('user', 'assistant') GROUP BY dialog_id`,
			func(s *DialogSummary, _ string, n int64) { s.Messages = n }},
		{`SELECT dialog_id, '' AS kind, COUNT(*) AS n FROM tool_calls WHERE tenant_id = ? AND dialog_id IN ? AND is_error GROUP BY dialog_id`,
			func(s *DialogSummary, _ string, n int64) { s.ToolErrors = n }},
		{`SELECT dialog_id, rating AS kind, COUNT(*) AS n FROM message_feedback WHERE tenant_id = ? AND dialog_id IN ? GROUP BY dialog_id, rating`,
			func(s *DialogSummary, rating string, n int64) {
				if rating == FeedbackUp {
					s.FeedbackUp = n
				} else {
					s.FeedbackDown = n
				}
			}},
	}
	for _, c := range counted {
		counts = counts[:0]
		if err := s.q(ctx).Raw(c.query, tenantID, ids).Scan(&counts).Error; err != nil {
			return nil, wrap("summarize dialogs", err)
		}
		for _, row := range counts {
			if sum := out[row.DialogID]; sum != nil {
				c.add(sum, row.Kind, row.N)
			}
		}
	}
	return out, wrap("summarize dialogs", di.snippets(ctx, ids, query, out))
}

// snippets fills each summary's snippet: the first message of the dialog
// matching query, or its first user message.
func (di Dialogs) snippets(ctx context.Context, ids []string, query string, out map[string]*DialogSummary) error {
	s, tenantID := di.s, di.tenant
	q := s.q(ctx).Table("messages m").Select("m.dialog_id, m.text").Where("m.tenant_id = ? AND m.dialog_id IN ?", tenantID, ids)
	terms := searchTerms(query)
	if len(terms) > 0 {
		q = s.matchingMessages(q, terms)
	} else {
		q = q.Where("m.seq = (SELECT MIN(f.seq) FROM messages f WHERE f.dialog_id = m.dialog_id AND f.kind = 'user')")
	}
	var rows []struct{ DialogID, Text string }
	if err := q.Order("m.dialog_id, m.seq").Scan(&rows).Error; err != nil {
		return err
	}
	for _, r := range rows {
		if sum := out[r.DialogID]; sum != nil && sum.Snippet == "" {
			sum.Snippet = excerpt(r.Text, terms)
		}
	}
	return nil
}

// excerpt cuts text to snippetRunes around the first of terms it holds
// (the start when none), marking cuts with "…".
func excerpt(text string, terms []string) string {
	text = strings.Join(strings.Fields(text), " ")
	if utf8.RuneCountInString(text) <= snippetRunes {
		return text
	}
	runes := []rune(text)
	lower := []rune(strings.ToLower(text))
	at := 0
	for _, t := range terms {
		if i := runeIndex(lower, []rune(strings.ToLower(t))); i >= 0 {
			at = i
			break
		}
	}
	start := max(0, at-snippetRunes/4)
	end := min(len(runes), start+snippetRunes)
	start = max(0, end-snippetRunes)
	out := string(runes[start:end])
	if start > 0 {
		out = "…" + out
	}
	if end < len(runes) {
		out += "…"
	}
	return out
}

// runeIndex is strings.Index over runes, so cuts never split a character.
func runeIndex(s, sub []rune) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if string(s[i:i+len(sub)]) == string(sub) {
			return i
		}
	}
	return -1
}
