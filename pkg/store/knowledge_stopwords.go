package store

import "strings"

// stopWords are the words SQLite's keyword search leaves out of a query
// in a base of that language, as PostgreSQL's text search configuration
// of the same name does: Snowball's English list, which PostgreSQL
// ships as english.stop. Left in, "how", "do", "the" match nearly every
// chunk, so bm25 scores them all (at 10,000 chunks, most of a query's
// time) for words that tell nothing. Other languages keep every word.
var stopWords = map[string]map[string]bool{
	"english": wordSet(`
i me my myself we our ours ourselves you your yours yourself yourselves he him his
himself she her hers herself it its itself they them their theirs themselves what which
who whom this that these those am is are was were be been being have has had having do
does did doing a an the and but if or because as until while of at by for with about
against between into through during before after above below to from up down in out on
off over under again further then once here there when where why how all any both each
few more most other some such no nor not only own same so than too very s t can will just
don should now`),
}

func wordSet(words string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(words) {
		set[w] = true
	}
	return set
}

// withoutStopWords drops the language's stop words from terms, unless
// that leaves none.
func withoutStopWords(terms []string, language string) []string {
	stop := stopWords[language]
	var kept []string
	for _, t := range terms {
		if !stop[strings.ToLower(t)] {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return terms
	}
	return kept
}
