package index

import (
	"bytes"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	porterstemmer "github.com/blevesearch/go-porterstemmer"
	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// The English stop list and the three stemmers, as bleve's analysis/lang/en
// and analysis/token/porter give them, without those packages: they
// register themselves in bleve's registry at init, which links bleve's
// search and geo packages (S2, GeoJSON, json-iterator), 1 MiB of the binary
// and their start-up work, for none of which the index has a use
// (docs/performance.md, "Size"). english_test.go checks each against
// bleve's.

// englishStopWords is bleve's stop_en list (Snowball's English stop words,
// BSD License).
var englishStopWords = []string{
	"a", "about", "above", "after", "again", "against", "all", "am", "an",
	"and", "any", "are", "aren't", "as", "at", "be", "because", "been",
	"before", "being", "below", "between", "both", "but", "by", "can't",
	"cannot", "could", "couldn't", "did", "didn't", "do", "does", "doesn't",
	"doing", "don't", "down", "during", "each", "few", "for", "from", "further",
	"had", "hadn't", "has", "hasn't", "have", "haven't", "having", "he", "he'd",
	"he'll", "he's", "her", "here", "here's", "hers", "herself", "him",
	"himself", "his", "how", "how's", "i", "i'd", "i'll", "i'm", "i've", "if",
	"in", "into", "is", "isn't", "it", "it's", "its", "itself", "let's", "me",
	"more", "most", "mustn't", "my", "myself", "no", "nor", "not", "of", "off",
	"on", "once", "only", "or", "other", "ought", "our", "ours", "ourselves",
	"out", "over", "own", "same", "shan't", "she", "she'd", "she'll", "she's",
	"should", "shouldn't", "so", "some", "such", "than", "that", "that's",
	"the", "their", "theirs", "them", "themselves", "then", "there", "there's",
	"these", "they", "they'd", "they'll", "they're", "they've", "this", "those",
	"through", "to", "too", "under", "until", "up", "very", "was", "wasn't",
	"we", "we'd", "we'll", "we're", "we've", "were", "weren't", "what",
	"what's", "when", "when's", "where", "where's", "which", "while", "who",
	"who's", "whom", "why", "why's", "with", "won't", "would", "wouldn't",
	"you", "you'd", "you'll", "you're", "you've", "your", "yours", "yourself",
	"yourselves",
}

// porterFilter is bleve's porter token filter.
type porterFilter struct{}

func (porterFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	for _, token := range input {
		if !token.KeyWord {
			token.Term = analysis.BuildTermFromRunes(porterstemmer.StemWithoutLowerCasing(bytes.Runes(token.Term)))
		}
	}
	return input
}

// snowballFilter is bleve's stemmer_en_snowball.
type snowballFilter struct{}

func (snowballFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	for _, token := range input {
		env := snowballstem.NewEnv(string(token.Term))
		english.Stem(env)
		token.Term = []byte(env.Current())
	}
	return input
}

// pluralFilter is bleve's stemmer_en_plural: Mark Harwood's English plural
// stemmer as OpenSearch has it (EnglishPluralStemFilter; Apache-2.0).
type pluralFilter struct{}

func (pluralFilter) Filter(input analysis.TokenStream) analysis.TokenStream {
	for _, token := range input {
		token.Term = []byte(pluralStem(string(token.Term)))
	}
	return input
}

// Words ending in oes, and in ches, that keep the e when stemmed.
var (
	oesExceptions  = []string{"shoes", "canoes", "oboes"}
	chesExceptions = []string{"cliches", "avalanches", "mustaches", "moustaches", "quiches", "headaches", "heartaches", "porsches", "tranches", "caches"}
)

func pluralStem(word string) string {
	runes := []rune(strings.ToLower(word))
	n := len(runes)
	if n < 3 || runes[n-1] != 's' {
		return string(runes)
	}
	switch runes[n-2] {
	case 'u', 's':
		return string(runes)
	case 'e':
		// ies -> y, on words of more than 4 letters (spies -> spy, pies -> pie).
		if n > 4 && runes[n-3] == 'i' {
			runes[n-3] = 'y'
			return string(runes[:n-2])
		}
		if n > 3 {
			// xes, with more than one letter before (boxes -> box, axes -> axe).
			if n > 4 && runes[n-3] == 'x' {
				return string(runes[:n-2])
			}
			if runes[n-3] == 'o' {
				if hasSuffix(runes, oesExceptions) {
					return string(runes[:n-1])
				}
				return string(runes[:n-2])
			}
			if n > 4 {
				// shes, sses
				if runes[n-4] == 's' && (runes[n-3] == 'h' || runes[n-3] == 's') {
					return string(runes[:n-2])
				}
				if runes[n-4] == 'c' && runes[n-3] == 'h' {
					if hasSuffix(runes, chesExceptions) {
						return string(runes[:n-1])
					}
					return string(runes[:n-2])
				}
			}
		}
	}
	return string(runes[:n-1])
}

// hasSuffix says whether word ends with one of the exceptions, or is a
// suffix of one (bleve's isException, kept as it is).
func hasSuffix(word []rune, exceptions []string) bool {
	for _, e := range exceptions {
		er := []rune(e)
		i, j := len(er)-1, len(word)-1
		matched := true
		for ; i >= 0 && j >= 0; i, j = i-1, j-1 {
			if er[i] != word[j] {
				matched = false
				break
			}
		}
		if matched {
			return true
		}
	}
	return false
}
