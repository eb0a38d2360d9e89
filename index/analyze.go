package index

import (
	"regexp"
	"strings"

	"github.com/blevesearch/bleve/v2/analysis"
	regexpchar "github.com/blevesearch/bleve/v2/analysis/char/regexp"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/camelcase"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/token/stop"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
)

// splitChars are the identifier separators the unicode tokenizer would keep
// inside a token ("create_issue", "a.b", "foo:bar" are single words under
// UAX#29), so they become spaces before tokenizing.
const splitChars = `[_\-./:]`

// analyzer turns text into index terms. The same value analyzes documents at
// build time and queries at search time, which is what makes them match. It
// is built from bleve's analysis components directly (not through bleve's
// global registry) so every Index owns its own pipeline.
type analyzer struct {
	pipeline analysis.Analyzer
}

func newAnalyzer(opts Options) (*analyzer, error) {
	filters := []analysis.TokenFilter{
		// camelCase runs before lowercasing: it needs the case boundaries.
		// It also splits letter/digit boundaries ("v2api" -> v 2 api).
		camelcase.NewCamelCaseFilter(),
		lowercase.NewLowerCaseFilter(),
	}
	if opts.StopWords {
		words, err := en.TokenMapConstructor(nil, nil)
		if err != nil {
			return nil, err
		}
		for _, w := range extraStopWords() {
			words.AddToken(w)
		}
		filters = append(filters, stop.NewStopTokensFilter(words))
	}
	if opts.Stem {
		filters = append(filters, porter.NewPorterStemmer())
	}
	return &analyzer{pipeline: &analysis.DefaultAnalyzer{
		CharFilters:  []analysis.CharFilter{regexpchar.New(regexp.MustCompile(splitChars), []byte(" "))},
		Tokenizer:    unicode.NewUnicodeTokenizer(),
		TokenFilters: filters,
	}}, nil
}

// terms returns the analyzed terms of text in order, duplicates kept.
func (a *analyzer) terms(text string) []string {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	stream := a.pipeline.Analyze([]byte(text))
	out := make([]string, 0, len(stream))
	for _, tok := range stream {
		if len(tok.Term) == 0 {
			continue
		}
		out = append(out, string(tok.Term))
	}
	return out
}

// extraStopWords are words that carry no retrieval signal in requests to a
// tool catalog ("please help me ... I want to ...") and are missing from the
// snowball English list. They are generic request phrasing, not words of any
// particular query.
func extraStopWords() []string {
	return []string{
		"please", "want", "need", "like", "would", "could", "can", "also",
		"help", "using", "use", "via", "e", "g", "eg", "etc", "i", "s",
	}
}
