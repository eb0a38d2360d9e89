package tokens

import "unicode"

// split calls piece for each piece of s that o200k_base's split pattern
// matches, in order, as a backtracking regular expression engine (tiktoken's
// regexp2) finds them: the first of these alternatives that matches at a
// position wins, each with its greedy quantifiers backtracking as needed.
//
//	1  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	2  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//	3  \p{N}{1,3}
//	4   ?[^\s\p{L}\p{N}]+[\r\n/]*
//	5  \s*[\r\n]+
//	6  \s+(?!\S)
//	7  \s+
//
// Every character starts a match of one of them, so no text is skipped.
// Like regexp2, it works on runes: invalid UTF-8 is U+FFFD. Written out
// rather than run by regexp2, whose engine would be linked for this one
// pattern (tokens_test.go checks the two agree).
func split(s []rune, piece func([]rune)) {
	for i := 0; i < len(s); {
		end := matchAt(s, i)
		piece(s[i:end])
		i = end
	}
}

// matchAt returns the end of the match at i (> i).
func matchAt(s []rune, i int) int {
	for _, alt := range [...]func([]rune, int) int{letters, capitals, numbers, punctuation, newlines, spacesBeforeSpace, spaces} {
		if end := alt(s, i); end > i {
			return end
		}
	}
	return i + 1 // unreachable: spaces or punctuation matches any other character
}

func isUpperish(r rune) bool { // [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
	return unicode.In(r, unicode.Lu, unicode.Lt, unicode.Lm, unicode.Lo, unicode.M)
}

func isLowerish(r rune) bool { // [\p{Ll}\p{Lm}\p{Lo}\p{M}]
	return unicode.In(r, unicode.Ll, unicode.Lm, unicode.Lo, unicode.M)
}

func isLetterOrNumber(r rune) bool { return unicode.In(r, unicode.L, unicode.N) }

// isSpace is .NET's \s: [\f\n\r\t\v\x85\p{Z}].
func isSpace(r rune) bool {
	switch r {
	case '\f', '\n', '\r', '\t', '\v', 0x85:
		return true
	}
	return unicode.Is(unicode.Z, r)
}

// prefixes returns the starts to try after [^\r\n\p{L}\p{N}]?: with the
// optional character first (greedy), then without.
func prefixes(s []rune, i int) []int {
	if r := s[i]; r != '\r' && r != '\n' && !isLetterOrNumber(r) && i+1 < len(s) {
		return []int{i + 1, i}
	}
	return []int{i}
}

// letters is alternative 1.
func letters(s []rune, i int) int {
	for _, p := range prefixes(s, i) {
		j := p
		for j < len(s) && isUpperish(s[j]) {
			j++
		}
		// The upper-case run gives characters back, last first, until
		// the lower-case run can start.
		for m := j; m >= p; m-- {
			if m < len(s) && isLowerish(s[m]) {
				k := m + 1
				for k < len(s) && isLowerish(s[k]) {
					k++
				}
				return contraction(s, k)
			}
		}
	}
	return i
}

// capitals is alternative 2.
func capitals(s []rune, i int) int {
	for _, p := range prefixes(s, i) {
		j := p
		for j < len(s) && isUpperish(s[j]) {
			j++
		}
		if j == p {
			continue
		}
		for j < len(s) && isLowerish(s[j]) {
			j++
		}
		return contraction(s, j)
	}
	return i
}

// contraction is (?i:'s|'t|'re|'ve|'m|'ll|'d)? at i: the end after it, or
// i. Case-insensitive as .NET is: ſ (U+017F) is an s.
func contraction(s []rune, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return i
	}
	is := func(k int, lower rune) bool {
		if k >= len(s) {
			return false
		}
		r := s[k]
		return r == lower || r == unicode.ToUpper(lower) || (lower == 's' && r == 'ſ')
	}
	switch {
	case is(i+1, 's'), is(i+1, 't'), is(i+1, 'm'), is(i+1, 'd'):
		return i + 2
	case is(i+1, 'r') && is(i+2, 'e'), is(i+1, 'v') && is(i+2, 'e'), is(i+1, 'l') && is(i+2, 'l'):
		return i + 3
	}
	return i
}

// numbers is alternative 3.
func numbers(s []rune, i int) int {
	j := i
	for j < len(s) && j < i+3 && unicode.Is(unicode.N, s[j]) {
		j++
	}
	return j
}

// punctuation is alternative 4.
func punctuation(s []rune, i int) int {
	other := func(r rune) bool { return !isSpace(r) && !isLetterOrNumber(r) }
	starts := []int{i}
	if s[i] == ' ' {
		starts = []int{i + 1, i}
	}
	for _, p := range starts {
		j := p
		for j < len(s) && other(s[j]) {
			j++
		}
		if j == p {
			continue
		}
		for j < len(s) && (s[j] == '\r' || s[j] == '\n' || s[j] == '/') {
			j++
		}
		return j
	}
	return i
}

// newlines is alternative 5 as regexp2 runs it: the whitespace up to its
// first line break and the line breaks right after it. (A backtracking
// engine would take the whitespace up to the last line break: \s* is
// greedy. regexp2 does not, and the counts must be tiktoken-go's.)
func newlines(s []rune, i int) int {
	for j := i; j < len(s) && isSpace(s[j]); j++ {
		if s[j] == '\r' || s[j] == '\n' {
			for j < len(s) && (s[j] == '\r' || s[j] == '\n') {
				j++
			}
			return j
		}
	}
	return i
}

// spacesBeforeSpace is alternative 6: a whitespace run that ends the text,
// or all of one but its last character (which the next match starts with).
func spacesBeforeSpace(s []rune, i int) int {
	j := i
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	if j == len(s) || j-i < 2 {
		if j == len(s) {
			return j
		}
		return i
	}
	return j - 1
}

// spaces is alternative 7.
func spaces(s []rune, i int) int {
	j := i
	for j < len(s) && isSpace(s[j]) {
		j++
	}
	return j
}
