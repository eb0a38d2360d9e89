package index

import (
	"slices"
	"testing"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
)

// TestEnglishAsBleve: the stop list and the stemmers give what bleve's do.
func TestEnglishAsBleve(t *testing.T) {
	words := analysis.NewTokenMap()
	if err := words.LoadBytes(en.EnglishStopWords); err != nil {
		t.Fatal(err)
	}
	if len(words) != len(englishStopWords) {
		t.Errorf("%d stop words, bleve %d", len(englishStopWords), len(words))
	}
	for _, w := range englishStopWords {
		if !words[w] {
			t.Errorf("%q is not in bleve's stop list", w)
		}
	}
	terms := []string{"running", "runs", "ran", "files", "boxes", "axes", "shoes", "canoes", "heroes", "caches", "churches",
		"headaches", "spies", "pies", "classes", "wishes", "bus", "status", "is", "as", "s", "ies", "kisses", "generalization",
		"relational", "conditional", "hopeful", "Capitalized", "ÜBER", "naïve", "connections", "timezone", "datetimes", "repositories",
		"queries", "analyses", "stemming", "organizations", "a", "", "x1s", "porsches", "moustaches", "oboes"}
	for _, c := range []struct {
		ours, theirs analysis.TokenFilter
	}{
		{porterFilter{}, porter.NewPorterStemmer()},
		{snowballFilter{}, en.NewEnglishStemmerFilter()},
		{pluralFilter{}, en.NewEnglishPluralStemmerFilter()},
	} {
		for _, w := range terms {
			got := c.ours.Filter(analysis.TokenStream{{Term: []byte(w)}})
			want := c.theirs.Filter(analysis.TokenStream{{Term: []byte(w)}})
			if !slices.Equal(got[0].Term, want[0].Term) {
				t.Errorf("%T(%q) = %q, bleve %q", c.ours, w, got[0].Term, want[0].Term)
			}
		}
	}
}
