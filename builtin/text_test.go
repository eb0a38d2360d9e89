package builtin

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestTextTools(t *testing.T) {
	cs, _ := connect(t, "text", nil)
	runToolCases(t, cs, []toolCase{
		{name: "stats", tool: "text_stats", args: map[string]any{"text": "Hello world. How are you?\n\nFine!"},
			fields: map[string]string{"words": "6", "sentences": "3", "paragraphs": "2", "lines": "3", "characters": "32"}},
		{name: "stats unicode", tool: "text_stats", args: map[string]any{"text": "héllo"}, fields: map[string]string{"characters": "5", "bytes": "6", "sentences": "1"}},
		{name: "upper", tool: "change_case", args: map[string]any{"text": "hello World", "case": "upper"}, fields: map[string]string{"result": `"HELLO WORLD"`}},
		{name: "title", tool: "change_case", args: map[string]any{"text": "the QUICK brown", "case": "title"}, fields: map[string]string{"result": `"The Quick Brown"`}},
		{name: "sentence", tool: "change_case", args: map[string]any{"text": "HELLO There", "case": "sentence"}, fields: map[string]string{"result": `"Hello there"`}},
		{name: "camel", tool: "change_case", args: map[string]any{"text": "user_id from HTTPServer", "case": "camel"}, fields: map[string]string{"result": `"userIdFromHttpServer"`}},
		{name: "pascal", tool: "change_case", args: map[string]any{"text": "get user name", "case": "pascal"}, fields: map[string]string{"result": `"GetUserName"`}},
		{name: "snake", tool: "change_case", args: map[string]any{"text": "parseJSONInput2Fast", "case": "snake"}, fields: map[string]string{"result": `"parse_json_input2_fast"`}},
		{name: "kebab", tool: "change_case", args: map[string]any{"text": "Hello, World!", "case": "kebab"}, fields: map[string]string{"result": `"hello-world"`}},
		{name: "constant", tool: "change_case", args: map[string]any{"text": "max retry count", "case": "constant"}, fields: map[string]string{"result": `"MAX_RETRY_COUNT"`}},
		{name: "bad case", tool: "change_case", args: map[string]any{"text": "x", "case": "weird"}, wantErr: "case"},
		{name: "slug", tool: "slugify", args: map[string]any{"text": "  Héllo, Wörld! Don't stop -- 2025  "}, fields: map[string]string{"result": `"hello-world-dont-stop-2025"`}},
		{name: "slug sep", tool: "slugify", args: map[string]any{"text": "Straße über alles", "separator": "_"}, fields: map[string]string{"result": `"strasse_uber_alles"`}},
		{name: "slug max", tool: "slugify", args: map[string]any{"text": "one two three four", "max_length": 10}, fields: map[string]string{"result": `"one-two"`}},
		{name: "base64", tool: "encode", args: map[string]any{"text": "hi there", "encoding": "base64"}, fields: map[string]string{"result": `"aGkgdGhlcmU="`}},
		{name: "url", tool: "encode", args: map[string]any{"text": "a b&c=d/é", "encoding": "url"}, fields: map[string]string{"result": `"a+b%26c%3Dd%2F%C3%A9"`}},
		{name: "hex", tool: "encode", args: map[string]any{"text": "AB", "encoding": "hex"}, fields: map[string]string{"result": `"4142"`}},
		{name: "html", tool: "encode", args: map[string]any{"text": "<a href=\"x\">&</a>", "encoding": "html"}, fields: map[string]string{"result": `"\u0026lt;a href=\u0026#34;x\u0026#34;\u0026gt;\u0026amp;\u0026lt;/a\u0026gt;"`}},
		{name: "decode base64", tool: "decode", args: map[string]any{"text": "aGkgdGhlcmU", "encoding": "base64"}, fields: map[string]string{"result": `"hi there"`}},
		{name: "decode base64url", tool: "decode", args: map[string]any{"text": "_-8", "encoding": "base64url"}, wantErr: "not UTF-8"},
		{name: "decode url", tool: "decode", args: map[string]any{"text": "a+b%26c", "encoding": "url"}, fields: map[string]string{"result": `"a b\u0026c"`}},
		{name: "decode bad", tool: "decode", args: map[string]any{"text": "zz", "encoding": "hex"}, wantErr: "decode hex"},
		{name: "bad encoding", tool: "encode", args: map[string]any{"text": "x", "encoding": "rot13"}, wantErr: "encoding"},
		{name: "sha256", tool: "hash", args: map[string]any{"text": "abc"}, fields: map[string]string{"hex": `"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"`, "algorithm": `"sha256"`}},
		{name: "md5", tool: "hash", args: map[string]any{"text": "abc", "algorithm": "md5"}, fields: map[string]string{"hex": `"900150983cd24fb0d6963f7d28e17f72"`}},
		{name: "uuid too many", tool: "generate_uuid", args: map[string]any{"count": 1000}, wantErr: "more than 100"},
	})
	_, sc, _ := call(t, cs, "generate_uuid", map[string]any{"count": 3})
	uuids, _ := sc["uuids"].([]any)
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	if len(uuids) != 3 || uuids[0] == uuids[1] {
		t.Fatalf("uuids = %v", uuids)
	}
	for _, u := range uuids {
		if !re.MatchString(u.(string)) {
			t.Errorf("%v is not a v4 UUID", u)
		}
	}
}

// TestSlugify covers max_length with every separator (a two-byte one used
// to slice past the end of the slug and panic: issue 11), the accent table
// (which was off by one after ş) and Unicode edge cases.
func TestSlugify(t *testing.T) {
	cs, _ := connect(t, "text", nil)
	var cases []toolCase
	for _, tc := range []struct {
		name, text, sep string
		max             int
		want            string
	}{
		{"issue 11 panic", "a b", "--", 3, "a"},
		{"sep fits exactly", "a b", "--", 4, "a--b"},
		{"long sep", "ab cd ef", "=====", 8, "ab"},
		{"long sep fits", "ab cd ef", "=====", 9, "ab=====cd"},
		{"multibyte sep counts as one", "ab cd", "→", 5, "ab→cd"},
		{"multibyte sep cut", "ab cd", "→", 4, "ab"},
		{"first word longer than max", "abcdefgh ij", "-", 3, "abc"},
		{"max 1", "hello", "-", 1, "h"},
		{"negative max is no max", "a b", "-", -5, "a-b"},
		{"huge max", "a b", "-", 1 << 62, "a-b"},
		{"old accent table", "àáâãäåāăą çćč ď èéêëēėęě ìíîïīį ł ñńň òóôõöøōő ŕř śšş ť ùúûüūůűų ýÿ źżž", "-", 0,
			"aaaaaaaaa-ccc-d-eeeeeeee-iiiiii-l-nnn-oooooooo-rr-sss-t-uuuuuuuu-yy-zzz"},
		{"upper case accents", "ÀÉÎÕÜ Ÿ Ş Ť", "-", 0, "aeiou-y-s-t"},
		{"ligatures and others", "Straße Æsir Œuvre Þór ĳs", "-", 0, "strasse-aesir-oeuvre-thor-ijs"},
		{"combining marks", "e\u0301te\u0301 cafe\u0301", "-", 0, "ete-cafe"},
		{"dotted capital I", "İstanbul", "-", 0, "istanbul"},
		{"non-Latin letters dropped", "日本 語abc", "-", 0, "abc"},
		{"emoji and symbols", "🚀 go ✓ now", "-", 0, "go-now"},
		{"nothing left", "!!! ???", "-", 0, ""},
		{"replacement char", "a\ufffdb", "-", 0, "a-b"},
	} {
		args := map[string]any{"text": tc.text, "separator": tc.sep, "max_length": tc.max}
		want, _ := json.Marshal(tc.want)
		cases = append(cases, toolCase{name: tc.name, tool: "slugify", args: args, fields: map[string]string{"result": string(want)}})
	}
	cases = append(cases, toolCase{name: "separator too long", tool: "slugify", args: map[string]any{"text": "a b", "separator": strings.Repeat("-", 9)}, wantErr: "longer than 8 characters"})
	runToolCases(t, cs, cases)
}

// TestTextLimits: outputs past the limit fail the call with an error
// naming it. The limit is lowered to 64 KiB here, so that the test does not
// push megabytes through -race; the hub test (TestBuiltinsContained) runs
// the real 4 MiB one.
func TestTextLimits(t *testing.T) {
	ts := &textServer{fold: foldTable(), maxResult: 64 << 10}
	srv, err := ts.server(Options{})
	if err != nil {
		t.Fatal(err)
	}
	guard(srv, "text", Options{}.withDefaults())
	cs := connectServer(t, srv, nil)
	html := strings.Repeat(`<a href="x">&</a>`, 48<<10/17) // 48 KiB, grows 3x as HTML entities
	words := strings.Repeat("a ", 16<<10)                  // 32 KiB of one-letter words
	runToolCases(t, cs, []toolCase{
		{name: "encode html", tool: "encode", args: map[string]any{"text": html, "encoding": "html"}, wantErr: "over the 64 KiB limit of text results"},
		{name: "encode base64", tool: "encode", args: map[string]any{"text": strings.Repeat("x", 56<<10), "encoding": "base64"}, wantErr: "over the 64 KiB limit"},
		{name: "encode hex", tool: "encode", args: map[string]any{"text": strings.Repeat("x", 40<<10), "encoding": "hex"}, wantErr: "over the 64 KiB limit"},
		{name: "encode url", tool: "encode", args: map[string]any{"text": strings.Repeat("é", 16<<10), "encoding": "url"}, wantErr: "over the 64 KiB limit"},
		{name: "encode under the limit", tool: "encode", args: map[string]any{"text": strings.Repeat("x", 16<<10), "encoding": "hex"}, text: []string{"7878"}},
		{name: "slugify with a long separator", tool: "slugify", args: map[string]any{"text": words, "separator": "--------"}, wantErr: "over the 64 KiB limit"},
		{name: "case change over the limit", tool: "change_case", args: map[string]any{"text": strings.Repeat("x", 65<<10), "case": "upper"}, wantErr: "over the 64 KiB limit"},
		{name: "a rejected value is not echoed whole", tool: "change_case", args: map[string]any{"text": "x", "case": strings.Repeat("q", 64<<10)}, wantErr: "more bytes not shown)"},
		{name: "decode keeps errors short", tool: "decode", args: map[string]any{"text": strings.Repeat("////", 1<<12), "encoding": "base64"}, wantErr: "not UTF-8 text (12288 bytes, hex ffff"},
	})
}
