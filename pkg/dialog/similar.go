package dialog

import (
	"slices"
	"strings"
	"unicode"
)

// Questions are compared as sets of normalised words: lower case, letters
// and digits only, without the most common English filler words. Two
// questions are the same when the Jaccard index of their sets (shared
// words over all words) is at least sameQuestion. It is deterministic
// and cheap, and needs no model; docs/insights.md describes it.
const sameQuestion = 0.6

var fillerWords = map[string]bool{
	"a": true, "an": true, "the": true, "is": true, "are": true, "am": true, "i": true, "my": true, "me": true,
	"to": true, "of": true, "do": true, "does": true, "can": true, "you": true, "your": true, "it": true, "in": true,
	"on": true, "for": true, "and": true, "or": true, "be": true, "please": true, "hi": true, "hello": true,
	"what": true, "how": true, "where": true, "when": true, "why": true, "with": true, "this": true, "that": true,
}

// questionWords is the normalised word set of text, sorted.
func questionWords(text string) []string {
	fields := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var out []string
	for _, f := range fields {
		if !fillerWords[f] {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// jaccard is |a ∩ b| / |a ∪ b| of two sorted sets; two empty sets are
// not alike.
func jaccard(a, b []string) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	shared, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch strings.Compare(a[i], b[j]) {
		case 0:
			shared++
			i++
			j++
		case -1:
			i++
		default:
			j++
		}
	}
	return float64(shared) / float64(len(a)+len(b)-shared)
}

// sameQuestionAs reports whether two texts ask the same question.
func sameQuestionAs(a, b string) bool {
	return jaccard(questionWords(a), questionWords(b)) >= sameQuestion
}
