package tokens

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tiktoken-go/tokenizer/codec"
)

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
	alphabet := []rune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ 0123456789\n\t.,;:'\"!?-_/\\(){}[]<>éüßçñ中文字日本語한국어ðŸ™‚€")
	for range 300 {
		var b strings.Builder
		for range r.IntN(300) {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
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
