// Package closest suggests names close to a mistyped one: the "did you
// mean" of unknown tools, config keys and servers.
package closest

import (
	"sort"
	"strings"
	"unicode"
)

// closeEnough is the least similarity (0..1) for a suggestion. It admits one
// typo in a short name ("math__ad" -> "math__add": 0.92) and a missing
// server prefix, and rejects names that mostly share their server prefix
// ("math__ad" -> "math__multiply": 0.5; "weather__get_forcast" ->
// "weather__get_current": 0.7).
const closeEnough = 0.75

// maxNameLen is the longest name Closest compares. No tool name is longer
// (MCP allows 128 characters, the hub exposes at most 64), and the edit
// distance costs len(name) x len(candidate) per candidate: a client that
// sends a megabyte as a tool name must not make the hub spend seconds on
// suggestions.
const maxNameLen = 256

// Closest returns up to n of candidates that are close to name, best first:
// "Did you mean" suggestions for a mistyped tool name. Similarity is the
// best of edit distance relative to length, containment (a name without its
// server prefix, or a cut-off name) and word overlap (same words in another
// order or with other separators). Candidates that are not genuinely close
// are left out, so the result is often empty, and always for a name longer
// than maxNameLen bytes.
func Closest(name string, candidates []string, n int) []string {
	if n <= 0 || strings.TrimSpace(name) == "" || len(name) > maxNameLen {
		return nil
	}
	type scored struct {
		name  string
		score float64
	}
	ln := strings.ToLower(name)
	nn := alnum(ln)
	nw := nameWords(name)
	var hits []scored
	seen := make(map[string]bool, len(candidates))
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		seen[c] = true
		if s := similarity(ln, nn, nw, c); s >= closeEnough {
			hits = append(hits, scored{c, s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].name < hits[j].name
	})
	if len(hits) > n {
		hits = hits[:n]
	}
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.name
	}
	return out
}

func similarity(ln, nn string, nw []string, cand string) float64 {
	lc := strings.ToLower(cand)
	nc := alnum(lc)
	if nn != "" && nn == nc {
		// Same letters, other case or separators.
		return 0.99
	}
	// Edit distance relative to length, with a shared prefix counted at
	// half weight: names of one server share "<server>__", which would
	// otherwise make any two of its tools look alike.
	length := float64(max(runeLen(ln), runeLen(lc))) - float64(commonPrefix(ln, lc))/2
	best := 1 - float64(levenshtein(ln, lc))/length
	// Containment: one name inside the other, when the inner part is a
	// real word and not a stray letter.
	short, long := nn, nc
	if len(short) > len(long) {
		short, long = long, short
	}
	if len(short) >= 4 && strings.Contains(long, short) {
		best = max(best, 0.75+0.2*float64(len(short))/float64(len(long)))
	}
	// Word overlap (Jaccard) catches reordered or re-separated words.
	if j := jaccard(nw, nameWords(cand)); j > 0 {
		best = max(best, 0.4+0.5*j)
	}
	return best
}

func alnum(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// nameWords splits an identifier like the analyzer does (separators,
// camelCase, digits), lowercased, without stemming or stop words.
func nameWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	var prev rune
	for i, r := range s {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case i > 0 && unicode.IsUpper(r) && unicode.IsLower(prev),
			i > 0 && unicode.IsDigit(r) != unicode.IsDigit(prev) && len(cur) > 0:
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

func jaccard(a, b []string) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	set := make(map[string]int, len(a))
	for _, w := range a {
		set[w] |= 1
	}
	for _, w := range b {
		set[w] |= 2
	}
	inter := 0
	for _, v := range set {
		if v == 3 {
			inter++
		}
	}
	return float64(inter) / float64(len(set))
}

func commonPrefix(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	n := 0
	for n < len(ra) && n < len(rb) && ra[n] == rb[n] {
		n++
	}
	return n
}

func runeLen(s string) int { return len([]rune(s)) }

func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
