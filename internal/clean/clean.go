// Package clean makes text that a client or an upstream chose safe to write
// where people and parsers read it: a log line, the audit file, a metric
// label, /healthz, a terminal.
//
// Two rules hold for every such value: it is bounded in length (a client
// must not be able to fill a log or push the audit record out with one
// long name), and it carries no control characters (no ANSI escape that
// recolours a terminal, no \r or \n that fakes a log line, no Unicode bidi
// control that reorders what a reader sees).
package clean

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Replacement stands in for each control character and each byte of
// invalid UTF-8.
const Replacement = '\uFFFD'

// minMax is the smallest bound Line and Text honour: room for the cut
// marker and a little of the text.
const minMax = 64

// Line returns s as a single line of at most max bytes (max is raised to
// 64 when smaller): every control character (C0 including \t, \r and \n,
// DEL, C1), Unicode bidi control, line or paragraph separator and byte of
// invalid UTF-8 becomes U+FFFD, and text past the bound is cut at a rune
// boundary and ends with a marker giving the original length. A string
// that needs neither comes back as it is, without allocating.
func Line(s string, max int) string { return clip(s, max, false) }

// Text is Line for text that may span lines (a stack trace, a list of
// config problems): \n and \t are kept.
func Text(s string, max int) string { return clip(s, max, true) }

// Unsafe reports whether r is a character that Line replaces (multiLine:
// that Text replaces).
func Unsafe(r rune, multiLine bool) bool {
	switch {
	case multiLine && (r == '\n' || r == '\t'):
		return false
	case r < 0x20, r >= 0x7f && r <= 0x9f: // C0, DEL, C1
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, // arabic letter mark, LRM, RLM
		r >= 0x202a && r <= 0x202e, // LRE, RLE, PDF, LRO, RLO
		r >= 0x2066 && r <= 0x2069, // LRI, RLI, FSI, PDI
		r == 0x2028, r == 0x2029:   // line and paragraph separators
		return true
	}
	return r == utf8.RuneError
}

func clip(s string, max int, multiLine bool) string {
	if max < minMax {
		max = minMax
	}
	if len(s) <= max && plain(s, multiLine) {
		return s
	}
	// The marker is reserved up front only when the text will be cut, so
	// that short text with a control character keeps all of its length.
	budget := max
	marker := ""
	if len(s) > max {
		marker = "…[cut: " + strconv.Itoa(len(s)) + " bytes]"
		budget = max - len(marker)
	}
	var b strings.Builder
	b.Grow(min(len(s), max))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 || Unsafe(r, multiLine) {
			r, size = Replacement, max1(size)
		}
		if b.Len()+utf8.RuneLen(r) > budget {
			if marker == "" { // replacements made it grow past max
				marker = "…[cut: " + strconv.Itoa(len(s)) + " bytes]"
				return Prefix(b.String(), max-len(marker)) + marker
			}
			break
		}
		b.WriteRune(r)
		i += size
	}
	return b.String() + marker
}

// plain reports whether s is printable ASCII (plus \n and \t for
// multiLine): the common case, which needs no work.
func plain(s string, multiLine bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f {
			if multiLine && (c == '\n' || c == '\t') {
				continue
			}
			return false
		}
	}
	return true
}

// Prefix is at most n bytes of s, cut at a character boundary.
func Prefix(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func max1(n int) int {
	if n < 1 {
		return 1
	}
	return n
}

// JSON escapes, in valid JSON text, every character that Line would
// replace as \uXXXX, so that the text stays the same JSON value but shows
// no control character, bidi control or line separator raw (encoding/json
// writes DEL, C1 and bidi controls as they are). Invalid UTF-8 becomes
// \ufffd. It returns data itself when there is nothing to escape.
func JSON(data []byte) []byte {
	i := 0
	for i < len(data) && data[i] >= 0x20 && data[i] < 0x7f {
		i++
	}
	if i == len(data) {
		return data
	}
	out := make([]byte, 0, len(data)+16)
	out = append(out, data[:i]...)
	for i < len(data) {
		r, size := utf8.DecodeRune(data[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			out = append(out, `\ufffd`...)
			size = 1
		case r == '\n' || r == '\t' || r == '\r' || r == ' ':
			// Whitespace between tokens (raw whitespace is not valid
			// inside a JSON string, so this is outside one).
			out = append(out, byte(r))
		case Unsafe(r, false):
			out = append(out, `\u`...)
			out = append(out, hex4(r)...)
		default:
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	return out
}

func hex4(r rune) []byte {
	const digits = "0123456789abcdef"
	return []byte{digits[r>>12&0xf], digits[r>>8&0xf], digits[r>>4&0xf], digits[r&0xf]}
}
