package guardrail

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Words splits text into lower-case words without accents: "Crédit
// CARD-fraud" is [credit card fraud]. Compatibility forms (fullwidth
// letters, ligatures) are read as their plain letters.
func Words(text string) []string {
	var words []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			words = append(words, b.String())
			b.Reset()
		}
	}
	for _, r := range norm.NFKD.String(text) {
		switch {
		case unicode.Is(unicode.Mn, r): // an accent, split off by NFKD
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return words
}

// Topics matches a bot's blocked topics: a topic is a word or a phrase,
// found when its words appear in a text in a row. "Crypto" blocks "CRYPTO
// tips" but not "cryptography".
type Topics struct {
	topics  []string
	phrases [][]string
}

// NewTopics compiles the topics; a topic without words is ignored.
func NewTopics(topics []string) Topics {
	var t Topics
	for _, topic := range topics {
		if w := Words(topic); len(w) > 0 {
			t.topics, t.phrases = append(t.topics, topic), append(t.phrases, w)
		}
	}
	return t
}

// Empty says there is nothing to match.
func (t Topics) Empty() bool { return len(t.phrases) == 0 }

// Match returns the first topic text mentions, as configured.
func (t Topics) Match(text string) (string, bool) {
	if t.Empty() {
		return "", false
	}
	words := Words(text)
	for i, phrase := range t.phrases {
		if containsRun(words, phrase) {
			return t.topics[i], true
		}
	}
	return "", false
}

func containsRun(words, phrase []string) bool {
	for i := 0; i+len(phrase) <= len(words); i++ {
		match := true
		for j, w := range phrase {
			if words[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}
