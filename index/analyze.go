package index

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis"
)

// analyzer turns text into index terms. The same value analyzes tools at
// build time and queries at search time, which is what makes them match:
//
//   - words split on anything that is not a letter or digit (whitespace,
//     punctuation, `_ - . / :`), at camelCase boundaries ("getCurrent",
//     "HTMLParser" -> html parser) and at letter/digit boundaries ("v2api");
//     each Han/kana character is a word of its own (no spaces in CJK text);
//   - lowercased;
//   - optionally English stop words and numbers dropped, and stemmed.
//
// It is a single pass in Go rather than a bleve analysis chain (unicode
// segmenter, regexp char filter, camelCase filter): building a 10,000-tool
// index must stay well under a second. It reuses bleve's English stop list
// and stemmers.
type analyzer struct {
	dropNumbers bool
	minLen      int
	stop        map[string]bool
	phrases     map[string][][]string // first word -> request phrases starting with it
	stemmer     analysis.TokenFilter  // nil: no stemming
}

func newAnalyzer(opts Options) (*analyzer, error) {
	a := &analyzer{dropNumbers: opts.DropNumbers, minLen: opts.MinWordLen}
	if opts.StopWords {
		a.stop = make(map[string]bool, len(englishStopWords)+len(extraStopWords()))
		for _, w := range englishStopWords {
			a.stop[w] = true
		}
		for _, w := range extraStopWords() {
			a.stop[w] = true
		}
		a.phrases = make(map[string][][]string)
		for _, p := range requestPhrases() {
			a.phrases[p[0]] = append(a.phrases[p[0]], p)
		}
	}
	switch opts.Stemmer {
	case "":
	case StemPorter:
		a.stemmer = porterFilter{}
	case StemSnowball:
		a.stemmer = snowballFilter{}
	case StemPlural:
		a.stemmer = pluralFilter{}
	default:
		return nil, fmt.Errorf("unknown stemmer %q", opts.Stemmer)
	}

	return a, nil
}

// extraStopWords are words that carry no retrieval signal in requests to a
// tool catalog ("please help me ... I want to ...") and are missing from the
// snowball English list. They are generic request phrasing, not words of any
// particular query.
func extraStopWords() []string {
	return []string{
		"please", "want", "need", "like", "would", "could", "can", "also",
		"help", "using", "use", "via", "e", "g", "eg", "etc", "s",
	}
}

// requestPhrases address the assistant rather than describe a tool's job:
// "show me today's trending topics" asks for trending topics, not for a
// tool that shows something, and "give me some advice" for no tool that
// gives. They are dropped from requests only, as whole phrases: "show",
// "give" and "tell" alone can name what a tool does (show_tables,
// give_feedback).
func requestPhrases() [][]string {
	return [][]string{
		{"show", "me"}, {"show", "us"},
		{"tell", "me"}, {"tell", "us"},
		{"give", "me"}, {"give", "us"},
		{"let", "me", "know"}, {"let", "us", "know"},
	}
}

// queryTerms is terms for a request: request phrases are dropped too.
// Safe for concurrent use.
func (a *analyzer) queryTerms(text string) []string {
	if len(a.phrases) == 0 {
		return a.terms(text)
	}
	var words []string
	a.words(text, func(w string) { words = append(words, w) })
	var out []string
	for i := 0; i < len(words); i++ {
		if n := a.phraseAt(words[i:]); n > 0 {
			i += n - 1
			continue
		}
		if t, ok := a.term(words[i], nil); ok {
			out = append(out, t)
		}
	}
	return out
}

// phraseAt is the length of the request phrase words starts with, 0 if
// none.
func (a *analyzer) phraseAt(words []string) int {
	for _, p := range a.phrases[words[0]] {
		if len(p) <= len(words) && slices.Equal(p, words[:len(p)]) {
			return len(p)
		}
	}
	return 0
}

// terms returns the analyzed terms of text in order, duplicates kept. Safe
// for concurrent use.
func (a *analyzer) terms(text string) []string {
	return a.termsMemo(text, nil)
}

// termsMemo is terms with stems memoized in memo (word -> stem), which
// saves most stemming in a build; memo must not be shared between
// goroutines. A nil memo stems every word.
func (a *analyzer) termsMemo(text string, memo map[string]string) []string {
	var out []string
	a.words(text, func(w string) {
		if t, ok := a.term(w, memo); ok {
			out = append(out, t)
		}
	})
	return out
}

// term is the index term of a lowercased word; false for a word the
// analyzer drops.
func (a *analyzer) term(w string, memo map[string]string) (string, bool) {
	if a.stop[w] || len(w) < a.minLen || a.dropNumbers && isDigits(w) {
		return "", false
	}
	if a.stemmer != nil {
		w = a.stemWord(w, memo)
	}
	return w, true
}

func (a *analyzer) stemWord(w string, memo map[string]string) string {
	if s, ok := memo[w]; ok {
		return s
	}
	s := w
	if len(w) > 2 && !isDigits(w) {
		tok := &analysis.Token{Term: []byte(w)}
		if out := a.stemmer.Filter(analysis.TokenStream{tok}); len(out) == 1 && len(out[0].Term) > 0 {
			s = string(out[0].Term)
		}
	}
	if memo != nil {
		memo[w] = s
	}
	return s
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

type runeClass int

const (
	classOther runeClass = iota
	classLower
	classUpper
	classDigit
	classIdeo // a word by itself
)

func classify(r rune) runeClass {
	switch {
	case r < utf8.RuneSelf:
		switch {
		case 'a' <= r && r <= 'z':
			return classLower
		case 'A' <= r && r <= 'Z':
			return classUpper
		case '0' <= r && r <= '9':
			return classDigit
		}
		return classOther
	case unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r):
		return classIdeo
	case unicode.IsUpper(r):
		return classUpper
	case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
		return classLower
	case unicode.IsDigit(r):
		return classDigit
	}
	return classOther
}

// words calls emit with each lowercased word of text.
func (a *analyzer) words(text string, emit func(string)) {
	start := -1 // byte offset of the current word, -1 when none
	prevIdx := 0
	upperRun := 0 // upper-case letters ending the current word
	var prev runeClass
	flush := func(end int) {
		if start >= 0 && end > start {
			emit(lower(text[start:end]))
		}
		start = -1
	}
	for i, r := range text {
		c := classify(r)
		switch c {
		case classOther:
			flush(i)
		case classIdeo:
			flush(i)
			emit(string(r))
		default:
			if start >= 0 {
				switch {
				case (c == classDigit) != (prev == classDigit):
					flush(i)
				case c == classUpper && prev == classLower:
					flush(i)
				case c == classLower && prev == classUpper && upperRun >= 2:
					// "HTMLParser": the last capital starts the next word.
					emit(lower(text[start:prevIdx]))
					start = prevIdx
				}
			}
			if start < 0 {
				start = i
				upperRun = 0
			}
			if c == classUpper {
				upperRun++
			} else {
				upperRun = 0
			}
		}
		prev, prevIdx = c, i
	}
	flush(len(text))
}

// lower is strings.ToLower without the copy for a word that is already
// lower case (most words): the build keeps millions of them.
func lower(w string) string {
	for i := 0; i < len(w); i++ {
		if c := w[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			return strings.ToLower(w)
		}
	}
	return w
}
