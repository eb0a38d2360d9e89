package builtin

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"html"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

func newTextServer(_ map[string]string, opts Options) (*mcp.Server, error) {
	return (&textServer{fold: foldTable(), maxResult: maxTextResult}).server(opts)
}

func (ts *textServer) server(opts Options) (*mcp.Server, error) {
	s := newServer("text", "Deterministic text utilities: exact counts, case conversion, slugs, encodings, UUIDs and hashes.", nil)

	addTool(s, "text", opts, &mcp.Tool{
		Name:        "text_stats",
		Description: "Count the words, characters (with and without spaces), bytes, lines, sentences and paragraphs of a text, with an estimated reading time. Use for exact word count or character count / length checks.",
		Annotations: readOnly("Text statistics"),
	}, textStats)

	if err := addToolSchema(s, "text", opts, &mcp.Tool{
		Name:        "change_case",
		Description: "Convert text to UPPER CASE, lower case, Title Case, Sentence case, camelCase, PascalCase, snake_case, kebab-case or CONSTANT_CASE (e.g. for variable names or headings).",
		Annotations: readOnly("Change case"),
	}, ts.changeCase, schemaWithEnum[changeCaseIn]("case", "upper", "lower", "title", "sentence", "camel", "pascal", "snake", "kebab", "constant")); err != nil {
		return nil, err
	}

	addTool(s, "text", opts, &mcp.Tool{
		Name:        "slugify",
		Description: "Turn a title or phrase into a URL-safe slug (lowercase ASCII words joined by hyphens, accents removed), e.g. 'Héllo, World!' -> 'hello-world'.",
		Annotations: readOnly("Slugify"),
	}, ts.slugify)

	if err := addToolSchema(s, "text", opts, &mcp.Tool{
		Name:        "encode",
		Description: "Encode text as base64, URL-safe base64, URL percent-encoding (query escaping), hexadecimal or HTML entities.",
		Annotations: readOnly("Encode text"),
	}, ts.encodeText, schemaWithEnum[codecIn]("encoding", "base64", "base64url", "url", "hex", "html")); err != nil {
		return nil, err
	}
	if err := addToolSchema(s, "text", opts, &mcp.Tool{
		Name:        "decode",
		Description: "Decode base64, URL-safe base64, URL percent-encoded, hexadecimal or HTML-entity encoded text back to plain text.",
		Annotations: readOnly("Decode text"),
	}, decodeText, schemaWithEnum[codecIn]("encoding", "base64", "base64url", "url", "hex", "html")); err != nil {
		return nil, err
	}

	addTool(s, "text", opts, &mcp.Tool{
		Name:        "generate_uuid",
		Description: "Generate random UUIDs (version 4), e.g. for unique identifiers or database keys.",
		Annotations: &mcp.ToolAnnotations{Title: "Generate UUID", ReadOnlyHint: true, OpenWorldHint: ptr(false)},
	}, generateUUID)

	if err := addToolSchema(s, "text", opts, &mcp.Tool{
		Name:        "hash",
		Description: "Compute the hex digest (checksum) of a text with SHA-256 (default), SHA-512, SHA-1 or MD5.",
		Annotations: readOnly("Hash text"),
	}, hashText, schemaWithEnum[hashIn]("algorithm", "sha256", "sha512", "sha1", "md5")); err != nil {
		return nil, err
	}
	return s, nil
}

// schemaWithEnum makes T's input schema, inferred and with one property
// restricted to an enum, which the struct-tag inference cannot express.
func schemaWithEnum[T any](prop string, values ...any) func() (*jsonschema.Schema, error) {
	return func() (*jsonschema.Schema, error) {
		s, err := jsonschema.For[T](nil)
		if err != nil {
			return nil, fmt.Errorf("schema for %T: %w", *new(T), err)
		}
		p, ok := s.Properties[prop]
		if !ok {
			return nil, fmt.Errorf("schema for %T: no property %q", *new(T), prop)
		}
		p.Enum = values
		return s, nil
	}
}

type textIn struct {
	Text string `json:"text" jsonschema:"the input text"`
}

type textStatsOut struct {
	Characters         int     `json:"characters" jsonschema:"Unicode characters, including spaces"`
	CharactersNoSpaces int     `json:"characters_no_spaces"`
	Bytes              int     `json:"bytes" jsonschema:"UTF-8 bytes"`
	Words              int     `json:"words"`
	Lines              int     `json:"lines"`
	Sentences          int     `json:"sentences"`
	Paragraphs         int     `json:"paragraphs"`
	ReadingTimeMinutes float64 `json:"reading_time_minutes" jsonschema:"at 230 words per minute"`
	AverageWordLength  float64 `json:"average_word_length"`
}

func textStats(_ context.Context, _ *mcp.CallToolRequest, in textIn) (*mcp.CallToolResult, textStatsOut, error) {
	t := in.Text
	out := textStatsOut{Characters: utf8.RuneCountInString(t), Bytes: len(t)}
	letters := 0
	for _, r := range t {
		if !unicode.IsSpace(r) {
			out.CharactersNoSpaces++
		}
	}
	words := strings.Fields(t)
	out.Words = len(words)
	for _, w := range words {
		letters += utf8.RuneCountInString(strings.TrimFunc(w, unicode.IsPunct))
	}
	if out.Words > 0 {
		out.AverageWordLength = roundSig(float64(letters)/float64(out.Words), 3)
	}
	if t != "" {
		out.Lines = strings.Count(t, "\n") + 1
		if strings.HasSuffix(t, "\n") {
			out.Lines--
		}
	}
	for _, para := range strings.Split(strings.ReplaceAll(t, "\r\n", "\n"), "\n\n") {
		if strings.TrimSpace(para) != "" {
			out.Paragraphs++
		}
	}
	// A sentence ends at . ! ? followed by space or end; text without a
	// terminator still counts as one sentence.
	rs := []rune(strings.TrimSpace(t))
	for i, r := range rs {
		if (r == '.' || r == '!' || r == '?') && (i+1 == len(rs) || unicode.IsSpace(rs[i+1])) {
			out.Sentences++
		}
	}
	if out.Sentences == 0 && out.Words > 0 {
		out.Sentences = 1
	}
	out.ReadingTimeMinutes = roundSig(float64(out.Words)/230, 2)
	return textResult("%d words, %d characters (%d without spaces), %d bytes, %d lines, %d sentences, %d paragraphs; ~%s min to read.",
		out.Words, out.Characters, out.CharactersNoSpaces, out.Bytes, out.Lines, out.Sentences, out.Paragraphs, fmtNum(out.ReadingTimeMinutes)), out, nil
}

type changeCaseIn struct {
	Text string `json:"text" jsonschema:"the input text"`
	Case string `json:"case" jsonschema:"target case: upper, lower, title, sentence, camel, pascal, snake, kebab or constant"`
}

type textOut struct {
	Result string `json:"result"`
}

// splitWords breaks text into words at spaces, punctuation and camelCase
// boundaries, for the identifier-style cases.
func splitWords(s string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = nil
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if len(cur) > 0 && unicode.IsUpper(r) {
				prev := cur[len(cur)-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
			}
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return words
}

func capitalize(w string) string {
	r, n := utf8.DecodeRuneInString(w)
	return string(unicode.ToUpper(r)) + strings.ToLower(w[n:])
}

func (ts *textServer) changeCase(_ context.Context, _ *mcp.CallToolRequest, in changeCaseIn) (*mcp.CallToolResult, textOut, error) {
	var r string
	mode := strings.ToLower(strings.TrimSpace(in.Case))
	switch mode {
	case "upper":
		r = strings.ToUpper(in.Text)
	case "lower":
		r = strings.ToLower(in.Text)
	case "title":
		fields := strings.Fields(in.Text)
		for i, f := range fields {
			fields[i] = capitalize(f)
		}
		r = strings.Join(fields, " ")
	case "sentence":
		r = strings.ToLower(in.Text)
		if i := strings.IndexFunc(r, unicode.IsLetter); i >= 0 {
			r = r[:i] + capitalize(r[i:])
		}
	case "camel", "pascal":
		words := splitWords(in.Text)
		for i, w := range words {
			if i == 0 && mode == "camel" {
				words[i] = strings.ToLower(w)
			} else {
				words[i] = capitalize(w)
			}
		}
		r = strings.Join(words, "")
	case "snake", "kebab", "constant":
		sep := map[string]string{"snake": "_", "kebab": "-", "constant": "_"}[mode]
		r = strings.ToLower(strings.Join(splitWords(in.Text), sep))
		if mode == "constant" {
			r = strings.ToUpper(r)
		}
	default:
		return nil, textOut{}, fmt.Errorf("change_case: unknown case %s (use upper, lower, title, sentence, camel, pascal, snake, kebab or constant)", quote(in.Case))
	}
	if len(r) > ts.maxResult {
		return nil, textOut{}, ts.tooLarge("change_case", len(r))
	}
	return textResult("%s", r), textOut{r}, nil
}

type slugifyIn struct {
	Text      string `json:"text" jsonschema:"the title or phrase to slugify"`
	Separator string `json:"separator,omitempty" jsonschema:"word separator, default '-'"`
	MaxLength int    `json:"max_length,omitempty" jsonschema:"cut the slug at a word boundary to at most this many characters"`
}

// foldGroups lists, for each ASCII spelling, the Latin letters that fold to
// it in a slug (lower case: slugify lower-cases first). Letters with a
// diacritic folding to the plain letter, and ligatures and letters without
// a decomposition (ß, æ, ø, ł, þ) to their usual spelling. Grouped by
// spelling so that the table cannot fall out of step, as a positional one
// did (it mapped ť to 's').
func foldGroups() map[string]string {
	return map[string]string{
		"a":  "àáâãäåāăąǎǟǡǻȁȃȧạảấầẩẫậắằẳẵặ",
		"c":  "çćĉċč",
		"d":  "ďđð",
		"e":  "èéêëēĕėęěȅȇȩẹẻẽếềểễệ",
		"g":  "ĝğġģǧǵ",
		"h":  "ĥħȟ",
		"i":  "ìíîïĩīĭįıǐȉȋỉị",
		"j":  "ĵǰ",
		"k":  "ķǩ",
		"l":  "ĺļľŀł",
		"n":  "ñńņňŉǹ",
		"o":  "òóôõöøōŏőǒǫǭǿȍȏȫȭȯȱọỏốồổỗộớờởỡợơ",
		"r":  "ŕŗřȑȓ",
		"s":  "śŝşšșſ",
		"t":  "ţťŧț",
		"u":  "ùúûüũūŭůűųǔǖǘǚǜȕȗụủứừửữựư",
		"w":  "ŵẁẃẅ",
		"y":  "ýÿŷȳỳỵỷỹ",
		"z":  "źżžƶ",
		"ss": "ß",
		"ae": "æǣǽ",
		"oe": "œ",
		"th": "þ",
		"ij": "ĳ",
	}
}

// foldTable maps each folding letter to its ASCII spelling.
func foldTable() map[rune]string {
	t := map[rune]string{}
	for ascii, letters := range foldGroups() {
		for _, r := range letters {
			t[r] = ascii
		}
	}
	return t
}

// textServer holds what the text tools share: the accent table, built once
// per server, and the limit on a result's text (maxTextResult; tests lower
// it).
type textServer struct {
	fold      map[rune]string
	maxResult int
}

// foldRune is how r appears in a slug: ASCII letters and digits as they
// are, Latin letters with accents folded, and "" for everything else.
func (ts *textServer) foldRune(r rune) string {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			return string(r)
		}
		return ""
	}
	return ts.fold[r]
}

// maxSeparator bounds slugify's separator: a slug joins every word with
// it, so a long one would multiply the text.
const maxSeparator = 8

func (ts *textServer) slugify(_ context.Context, _ *mcp.CallToolRequest, in slugifyIn) (*mcp.CallToolResult, textOut, error) {
	sep := in.Separator
	if sep == "" {
		sep = "-"
	}
	if utf8.RuneCountInString(sep) > maxSeparator {
		return nil, textOut{}, fmt.Errorf("slugify: separator %s is longer than %d characters: use a short one such as '-' or '_'", quote(sep), maxSeparator)
	}
	var words []string
	var cur strings.Builder
	size := 0 // bytes of the joined slug
	flush := func() {
		if cur.Len() > 0 {
			if len(words) > 0 {
				size += len(sep)
			}
			size += cur.Len()
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for _, r := range strings.ToLower(in.Text) {
		if f := ts.foldRune(r); f != "" {
			cur.WriteString(f)
			continue
		}
		switch {
		case unicode.IsLetter(r) || unicode.Is(unicode.Mn, r):
			// A letter outside the Latin table, or a combining mark
			// (decomposed accents): drop it but keep the word going.
			continue
		case r == '\'' || r == '’':
			continue // "don't" -> "dont"
		}
		flush()
	}
	flush()
	if size > ts.maxResult {
		return nil, textOut{}, ts.tooLarge("slugify", size)
	}
	slug := joinWithin(words, sep, in.MaxLength)
	return textResult("%s", slug), textOut{slug}, nil
}

// joinWithin joins words with sep. With max > 0 it keeps the leading words
// that fit in max characters; a first word longer than max is cut to max.
func joinWithin(words []string, sep string, max int) string {
	if max <= 0 {
		return strings.Join(words, sep)
	}
	var b strings.Builder
	n, sepLen := 0, utf8.RuneCountInString(sep)
	for i, w := range words {
		add := len(w) // words are ASCII
		if i > 0 {
			add += sepLen
		}
		if n+add > max {
			if i == 0 {
				b.WriteString(w[:max])
			}
			break
		}
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(w)
		n += add
	}
	return b.String()
}

// maxTextResult bounds the text a text tool returns (its result carries it
// twice, as text and as structured content): 4 MiB.
const maxTextResult = 4 << 20

func (ts *textServer) tooLarge(tool string, size int) error {
	return fmt.Errorf("%s: the result would be %s, over the %s limit of text results: pass a shorter text (split it into parts)", tool, byteSize(size), byteSize(ts.maxResult))
}

type codecIn struct {
	Text     string `json:"text" jsonschema:"the input text"`
	Encoding string `json:"encoding" jsonschema:"base64, base64url, url, hex or html"`
}

func (ts *textServer) encodeText(_ context.Context, _ *mcp.CallToolRequest, in codecIn) (*mcp.CallToolResult, textOut, error) {
	// Every encoding grows the text: at most 5 times (html, "&#34;" for a
	// quote). The exact size is known up front where it is cheap to know.
	enc := strings.ToLower(strings.TrimSpace(in.Encoding))
	if size := encodedLen(enc, len(in.Text)); size > ts.maxResult {
		return nil, textOut{}, ts.tooLarge("encode", size)
	}
	var r string
	switch enc {
	case "base64":
		r = base64.StdEncoding.EncodeToString([]byte(in.Text))
	case "base64url":
		r = base64.RawURLEncoding.EncodeToString([]byte(in.Text))
	case "url":
		r = url.QueryEscape(in.Text)
	case "hex":
		r = hex.EncodeToString([]byte(in.Text))
	case "html":
		r = html.EscapeString(in.Text)
	default:
		return nil, textOut{}, fmt.Errorf("encode: unknown encoding %s (use base64, base64url, url, hex or html)", quote(in.Encoding))
	}
	if len(r) > ts.maxResult {
		return nil, textOut{}, ts.tooLarge("encode", len(r))
	}
	return textResult("%s", r), textOut{r}, nil
}

// encodedLen is the exact encoded size of n bytes for the fixed-ratio
// encodings, and 0 (unknown until encoded) for the others.
func encodedLen(enc string, n int) int {
	switch enc {
	case "base64":
		return base64.StdEncoding.EncodedLen(n)
	case "base64url":
		return base64.RawURLEncoding.EncodedLen(n)
	case "hex":
		return hex.EncodedLen(n)
	}
	return 0
}

func decodeText(_ context.Context, _ *mcp.CallToolRequest, in codecIn) (*mcp.CallToolResult, textOut, error) {
	var b []byte
	var err error
	t := strings.TrimSpace(in.Text)
	enc := strings.ToLower(strings.TrimSpace(in.Encoding))
	switch enc {
	case "base64":
		b, err = base64.StdEncoding.DecodeString(t)
		if err != nil { // tolerate missing padding
			b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(t, "="))
		}
	case "base64url":
		b, err = base64.RawURLEncoding.DecodeString(strings.TrimRight(t, "="))
	case "url":
		var s string
		s, err = url.QueryUnescape(in.Text)
		b = []byte(s)
	case "hex":
		b, err = hex.DecodeString(t)
	case "html":
		b = []byte(html.UnescapeString(in.Text))
	default:
		return nil, textOut{}, fmt.Errorf("decode: unknown encoding %s (use base64, base64url, url, hex or html)", quote(in.Encoding))
	}
	if err != nil {
		return nil, textOut{}, fmt.Errorf("decode %s: %w", enc, err)
	}
	if !utf8.Valid(b) {
		return nil, textOut{}, fmt.Errorf("decode %s: the decoded bytes are not UTF-8 text (%d bytes, hex %s)", enc, len(b), hexPrefix(b, 32))
	}
	return textResult("%s", b), textOut{string(b)}, nil
}

// hexPrefix shows the first n bytes of b in hex, with "…" if there are more.
func hexPrefix(b []byte, n int) string {
	if len(b) <= n {
		return hex.EncodeToString(b)
	}
	return hex.EncodeToString(b[:n]) + "…"
}

type uuidIn struct {
	Count int `json:"count,omitempty" jsonschema:"how many UUIDs to generate, 1 to 100 (default 1)"`
}

type uuidOut struct {
	UUIDs []string `json:"uuids"`
}

func generateUUID(_ context.Context, _ *mcp.CallToolRequest, in uuidIn) (*mcp.CallToolResult, uuidOut, error) {
	n := limitOr(in.Count, 1)
	if n > 100 {
		return nil, uuidOut{}, fmt.Errorf("generate_uuid: count %d is more than 100", n)
	}
	out := uuidOut{UUIDs: make([]string, n)}
	for i := range out.UUIDs {
		var u [16]byte
		if _, err := rand.Read(u[:]); err != nil {
			return nil, uuidOut{}, fmt.Errorf("generate_uuid: %w", err)
		}
		u[6] = u[6]&0x0f | 0x40 // version 4
		u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
		h := hex.EncodeToString(u[:])
		out.UUIDs[i] = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	return textResult("%s", strings.Join(out.UUIDs, "\n")), out, nil
}

type hashIn struct {
	Text      string `json:"text" jsonschema:"the input text (hashed as UTF-8)"`
	Algorithm string `json:"algorithm,omitempty" jsonschema:"sha256 (default), sha512, sha1 or md5"`
}

type hashOut struct {
	Algorithm string `json:"algorithm"`
	Hex       string `json:"hex"`
}

func hashText(_ context.Context, _ *mcp.CallToolRequest, in hashIn) (*mcp.CallToolResult, hashOut, error) {
	alg := strings.ToLower(strings.ReplaceAll(in.Algorithm, "-", ""))
	var h hash.Hash
	switch alg {
	case "", "sha256":
		alg, h = "sha256", sha256.New()
	case "sha512":
		h = sha512.New()
	case "sha1":
		h = sha1.New()
	case "md5":
		h = md5.New()
	default:
		return nil, hashOut{}, fmt.Errorf("hash: unknown algorithm %s (use sha256, sha512, sha1 or md5)", quote(in.Algorithm))
	}
	h.Write([]byte(in.Text))
	out := hashOut{Algorithm: alg, Hex: hex.EncodeToString(h.Sum(nil))}
	return textResult("%s", out.Hex), out, nil
}
