package builtin

import (
	"regexp"
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
