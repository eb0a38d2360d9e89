package clientconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzEditJSONC: whatever a client's config file holds, an edit either
// refuses it or leaves a file that parses, holds the value just set where
// it was set, and loses it again on delete, with the other members kept.
func FuzzEditJSONC(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"mcpServers": {"a": {"command": "x"}}}`, "{\n  \"mcpServers\": null\n}",
		"{\"s\": {\n  \"a\": 1,\n  \"hub\": 2,\n}}", "{\"servers\": {\n  \"a\": {} // mine\n}}",
		"{\r\n  \"mcpServers\": {\r\n    \"a\": 1\r\n  }\r\n}\r\n", `[1, 2]`, `"x"`, `{"mcpServers": {"hub": 1, "hub": 2}}`,
		"{/* a */\"mcpServers\"/* b */:/* c */{\"a\"/**/:1/**/,/**/}/**/}", `{"a\"b": "//not a comment", "c": "/*"}`,
	} {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("..", "..", "testdata", "clients", "*"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	path := []string{"mcpServers"}
	entry := orderedObject{{"command", "/bin/mcp-hub"}, {"args", []string{"serve"}}}
	want := map[string]any{"command": "/bin/mcp-hub", "args": []any{"serve"}}
	f.Fuzz(func(t *testing.T, src []byte) {
		before, err := parseJSONC(src)
		if err != nil {
			return
		}
		out, err := setMember(src, path, "hub", entry)
		if err != nil {
			if before.root.kind == '{' {
				t.Fatalf("setMember refused an object: %v\n%q", err, src)
			}
			return
		}
		d, err := parseJSONC(out)
		if err != nil {
			t.Fatalf("setMember left a file that does not parse: %v\nin  %q\nout %q", err, src, out)
		}
		var got any
		if err := json.Unmarshal(d.rawMember(path, "hub"), &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("after setMember, hub is %v (%v)\nin  %q\nout %q", got, err, src, out)
		}
		others := func(d *jsonDoc) []string {
			var keys []string
			for _, m := range d.root.members {
				if m.key != path[0] {
					keys = append(keys, m.key)
				}
			}
			return keys
		}
		if !reflect.DeepEqual(others(before), others(d)) {
			t.Fatalf("setMember changed the other top-level members: %v -> %v\nin  %q\nout %q", others(before), others(d), src, out)
		}
		count := func(d *jsonDoc) int {
			n := 0
			for _, m := range d.find(path).members {
				if m.key == "hub" {
					n++
				}
			}
			return n
		}
		n := count(d)
		back, found, err := deleteMember(out, path, "hub")
		if err != nil || !found {
			t.Fatalf("deleteMember: found %v, %v\nout %q", found, err, out)
		}
		d2, err := parseJSONC(back)
		if err != nil {
			t.Fatalf("deleteMember left a file that does not parse: %v\nout  %q\nback %q", err, out, back)
		}
		if count(d2) != n-1 {
			t.Fatalf("deleteMember left %d members named hub, want %d\nout  %q\nback %q", count(d2), n-1, out, back)
		}
	})
}
