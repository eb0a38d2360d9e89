package clean

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 4<<20) // 8 MiB of two-byte runes
	for _, c := range []struct {
		name, in string
		max      int
		want     string // "" = only check the invariants
	}{
		{"plain", "github__create_issue", 256, "github__create_issue"},
		{"ansi", "x\x1b[31mred", 256, "x\uFFFD[31mred"},
		{"fake log line", "a\r\ntime=now level=ERROR msg=forged", 256, "a\uFFFD\uFFFDtime=now level=ERROR msg=forged"},
		{"bidi", "evil\u202egnp.exe", 256, "evil\uFFFDgnp.exe"},
		{"isolate and separators", "a\u2066b\u2028c\u0085d\x7f", 256, "a\uFFFDb\uFFFDc\uFFFDd\uFFFD"},
		{"invalid utf-8", "a\xffb", 256, "a\uFFFDb"},
		{"non-ascii kept", "größe 日本", 256, "größe 日本"},
		{"cut at rune boundary", long, 100, ""},
		{"replacements grow past max", strings.Repeat("\x1b", 80), 64, ""},
		{"tiny max raised", strings.Repeat("a", 1000), 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Line(c.in, c.max)
			if c.want != "" && got != c.want {
				t.Errorf("Line = %q, want %q", got, c.want)
			}
			if len(got) > max(c.max, minMax) {
				t.Errorf("Line: %d bytes, over the bound %d", len(got), max(c.max, minMax))
			}
			if !utf8.ValidString(got) {
				t.Errorf("Line: invalid UTF-8 %q", got)
			}
			for _, r := range got {
				if Unsafe(r, false) && r != Replacement {
					t.Errorf("Line kept %U", r)
				}
			}
			if len(c.in) > max(c.max, minMax) && !strings.Contains(got, "bytes]") {
				t.Errorf("Line cut %q without saying how long it was", got)
			}
		})
	}
}

func TestLineAllocatesNothingForPlainText(t *testing.T) {
	s := "github__create_issue"
	if n := testing.AllocsPerRun(100, func() { _ = Line(s, 256) }); n != 0 {
		t.Errorf("Line allocates %v times for plain text", n)
	}
}

func TestText(t *testing.T) {
	t.Parallel()
	if got, want := Text("line 1\n\tline 2\r\x1b[0m", 256), "line 1\n\tline 2\uFFFD\uFFFD[0m"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{"a":"x` + "\u202e" + `y","b":["` + "\x7f\u0085\u2028" + `"]}`,
		"{\n \"k\": \"plain\"\n}",
		`{"k":"größe"}`,
	} {
		out := JSON([]byte(in))
		var a, b any
		if err := json.Unmarshal([]byte(in), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatalf("JSON(%q) = %q: not JSON: %v", in, out, err)
		}
		if ja, jb := mustMarshal(a), mustMarshal(b); ja != jb {
			t.Errorf("JSON changed the value: %s, want %s", jb, ja)
		}
		for _, r := range string(out) {
			if Unsafe(r, false) && r != '\n' {
				t.Errorf("JSON(%q) kept %U raw: %q", in, r, out)
			}
		}
	}
}

func mustMarshal(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
