package tokens

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/dlclark/regexp2/v2"
	"github.com/tiktoken-go/tokenizer/codec"
)

// pattern is o200k_base's split pattern, as tiktoken-go gives it to regexp2.
const pattern = `[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

// alphabet has a character of every kind the pattern tells apart: lower,
// upper, title-case, modifier and other letters, marks, digits and other
// numbers, every kind of white space, line breaks, the apostrophe and the
// letters of the contractions in both cases (and ſ, an s to .NET), slash,
// punctuation, symbols, and bytes that are not UTF-8.
var alphabet = []string{"a", "z", "A", "Z", "ǅ", "ʰ", "中", "ا", "\u0301", "\u0903", "0", "9", "٣", "Ⅻ", "½",
	" ", "  ", "\t", "\v", "\f", "\u0085", "\u00a0", "\u2028", "\u3000", "\r", "\n", "\r\n",
	"'", "'", "s", "S", "ſ", "t", "T", "re", "RE", "ve", "m", "ll", "LL", "d", "D", "/", ".", ",", "!", "-", "_", "(", "{", "\"", "€", "🙂", "\xff", "\xc3", "é", "É", "ß"}

func randomText(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(40) {
		b.WriteString(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

// TestSplitMatchesPattern: split cuts every text where regexp2 running
// o200k_base's pattern does.
func TestSplitMatchesPattern(t *testing.T) {
	re := regexp2.MustCompile(pattern, regexp2.None)
	r := rand.New(rand.NewPCG(3, 4))
	texts := []string{"", "a", "I'm", "they'LL", "it'ſ", "HTTPServer", "ǅemal", "ʰa", "a\u0301", " \u0301x", "12345", "\n\n  \t", "x  \n y", "  ", "a  ", "a  b", " !!/\r\n/", " 1"}
	for range 20000 {
		texts = append(texts, randomText(r))
	}
	for _, s := range texts {
		var want []string
		m, err := re.FindStringMatch(s)
		for ; m != nil && err == nil; m, err = re.FindNextMatch(m) {
			want = append(want, m.String())
		}
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		split([]rune(s), func(p []rune) { got = append(got, string(p)) })
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Fatalf("split(%q) = %q, the pattern %q", s, got, want)
		}
	}
}

// TestGenerate writes o200k.bin.gz from tiktoken-go's o200k_base:
// MCP_HUB_TOKENS_GENERATE=1 go test -run TestGenerate ./internal/tokens
func TestGenerate(t *testing.T) {
	if os.Getenv("MCP_HUB_TOKENS_GENERATE") == "" {
		t.Skip("set MCP_HUB_TOKENS_GENERATE=1 to write o200k.bin.gz")
	}
	enc := codec.NewO200kBase()
	var out bytes.Buffer
	last := 0
	var pending []int // unused ranks before the next used one
	for rank := 0; rank < 200_000; rank++ {
		tok, err := enc.Decode([]uint{uint(rank)})
		if err != nil {
			pending = append(pending, rank)
			continue
		}
		for range pending {
			out.Write(binary.AppendUvarint(nil, 0))
		}
		pending = pending[:0]
		out.Write(binary.AppendUvarint(nil, uint64(len(tok))))
		out.WriteString(tok)
		last = rank
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(out.Bytes())
	zw.Close()
	if err := os.WriteFile("o200k.bin.gz", gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("o200k.bin.gz: %d bytes (%d unpacked), last rank %d", gz.Len(), out.Len(), last)
}

// TestVocabulary: every token of the embedded vocabulary decodes from the
// same rank in tiktoken.
func TestVocabulary(t *testing.T) {
	enc := codec.NewO200kBase()
	ranks := o200k().ranks
	n := 0
	for rank := range 200_000 {
		if _, err := enc.Decode([]uint{uint(rank)}); err == nil {
			n++
		}
	}
	if len(ranks) != n {
		t.Fatalf("%d tokens here, %d in tiktoken", len(ranks), n)
	}
	for tok, rank := range ranks {
		if s, err := enc.Decode([]uint{uint(rank)}); err != nil || s != tok {
			t.Fatalf("rank %d: %q here, %q in tiktoken (%v)", rank, tok, s, err)
		}
	}
}

// TestCountMatchesTiktoken compares counts on texts of every kind: prose,
// code, JSON, other scripts, numbers, runs of whitespace and punctuation,
// long unbroken pieces (the heap merge) and invalid UTF-8.
func TestCountMatchesTiktoken(t *testing.T) {
	enc := codec.NewO200kBase()
	texts := []string{
		"", "a", " ", "\n\n", "hello world", "Hello, World! I'm here; they'll've gone.",
		"The quick brown fox jumps over the lazy dog 1234567890 times.",
		`{"name":"time__current_time","description":"Current time","inputSchema":{"type":"object","properties":{"timezone":{"type":"string"}}}}`,
		"func main() {\n\tfmt.Println(\"héllo\")\n}\n",
		"Привет, мир! 你好，世界。 こんにちは世界 مرحبا بالعالم 🙂👍🏽",
		"   leading and trailing   \t\n  ", "a\r\nb\rc\n\n\nd",
		strings.Repeat("x", 5000), strings.Repeat("ab1", 700), strings.Repeat("!?", 300),
		strings.Repeat("aGVsbG8gd29ybGQ=", 200), strings.Repeat(" ", 1000) + "x",
		"\xff\xfe invalid \xc3 utf8 \xe2\x82", "CamelCaseIdentifierWithMANYParts and snake_case_names",
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		texts = append(texts, randomText(r))
	}
	for _, s := range texts {
		want, err := enc.Count(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Count(s)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("Count(%.60q) = %d, tiktoken %d", s, got, want)
		}
	}
}
