package clientconfig

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSetMember: a member added or replaced is laid out like its
// neighbours, and nothing else in the file changes.
func TestSetMember(t *testing.T) {
	hubEntry := orderedObject{{"command", "/bin/mcp-hub"}, {"args", []string{"serve"}}}
	for _, tc := range []struct {
		name, in string
		path     []string
		want     string
	}{
		{"empty object", `{}`, []string{"mcpServers"},
			"{\n  \"mcpServers\": {\n    \"hub\": {\n      \"command\": \"/bin/mcp-hub\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  }\n}"},
		{"empty section", "{\n  \"mcpServers\": {}\n}\n", []string{"mcpServers"},
			"{\n  \"mcpServers\": {\n    \"hub\": {\n      \"command\": \"/bin/mcp-hub\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  }\n}\n"},
		{"after the last, tabs", "{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"}\n\t}\n}\n", []string{"mcpServers"},
			"{\n\t\"mcpServers\": {\n\t\t\"a\": {\"command\": \"x\"},\n\t\t\"hub\": {\n\t\t\t\"command\": \"/bin/mcp-hub\",\n\t\t\t\"args\": [\n\t\t\t\t\"serve\"\n\t\t\t]\n\t\t}\n\t}\n}\n"},
		{"comment after the last stays with it", "{\"servers\": {\n  \"a\": {} // mine\n}}", []string{"servers"},
			"{\"servers\": {\n  \"a\": {}, // mine\n  \"hub\": {\n    \"command\": \"/bin/mcp-hub\",\n    \"args\": [\n      \"serve\"\n    ]\n  }\n}}"},
		{"trailing comma", "{\"servers\": {\n  \"a\": {},\n}}", []string{"servers"},
			"{\"servers\": {\n  \"a\": {},\n  \"hub\": {\n    \"command\": \"/bin/mcp-hub\",\n    \"args\": [\n      \"serve\"\n    ]\n  },\n}}"},
		{"one line stays one line", `{"mcpServers": {"a": {"command": "x"}}}`, []string{"mcpServers"},
			`{"mcpServers": {"a": {"command": "x"}, "hub": {"command":"/bin/mcp-hub","args":["serve"]}}}`},
		{"CRLF", "{\r\n  \"mcpServers\": {\r\n    \"a\": 1\r\n  }\r\n}\r\n", []string{"mcpServers"},
			"{\r\n  \"mcpServers\": {\r\n    \"a\": 1,\r\n    \"hub\": {\r\n      \"command\": \"/bin/mcp-hub\",\r\n      \"args\": [\r\n        \"serve\"\r\n      ]\r\n    }\r\n  }\r\n}\r\n"},
		{"replace an entry", "{\n  \"mcpServers\": {\n    \"hub\": {\"command\": \"old\"},\n    \"b\": 2\n  }\n}", []string{"mcpServers"},
			"{\n  \"mcpServers\": {\n    \"hub\": {\n      \"command\": \"/bin/mcp-hub\",\n      \"args\": [\n        \"serve\"\n      ]\n    },\n    \"b\": 2\n  }\n}"},
		{"missing nested path", "{\n  \"numStartups\": 3\n}", []string{"projects", "/p", "mcpServers"},
			"{\n  \"numStartups\": 3,\n  \"projects\": {\n    \"/p\": {\n      \"mcpServers\": {\n        \"hub\": {\n          \"command\": \"/bin/mcp-hub\",\n          \"args\": [\n            \"serve\"\n          ]\n        }\n      }\n    }\n  }\n}"},
		{"null section", "{\n  \"mcpServers\": null\n}", []string{"mcpServers"},
			"{\n  \"mcpServers\": {\n    \"hub\": {\n      \"command\": \"/bin/mcp-hub\",\n      \"args\": [\n        \"serve\"\n      ]\n    }\n  }\n}"},
	} {
		got, err := setMember([]byte(tc.in), tc.path, "hub", hubEntry)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if string(got) != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
		if !json.Valid(standardize(got)) {
			t.Errorf("%s: result does not parse: %s", tc.name, got)
		}
	}
}

func TestDeleteMember(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"middle", "{\"s\": {\n  \"a\": 1,\n  \"hub\": {\n    \"x\": 1\n  }, // ours\n  \"b\": 2\n}}", "{\"s\": {\n  \"a\": 1,\n  \"b\": 2\n}}"},
		{"first", "{\"s\": {\n  \"hub\": 1,\n  // about b\n  \"b\": 2\n}}", "{\"s\": {\n  // about b\n  \"b\": 2\n}}"},
		{"last", "{\"s\": {\n  \"a\": 1,\n  \"hub\": 2\n}}", "{\"s\": {\n  \"a\": 1\n}}"},
		{"last with trailing comma", "{\"s\": {\n  \"a\": 1,\n  \"hub\": 2,\n}}", "{\"s\": {\n  \"a\": 1,\n}}"}, // the style stays
		{"only", "{\"s\": {\n  \"hub\": 2\n}}", "{\"s\": {}}"},
		{"one line", `{"s": {"hub": 1, "b": 2}}`, `{"s": {"b": 2}}`},
		{"absent", `{"s": {"b": 2}}`, `{"s": {"b": 2}}`},
		// A block comment after the member that goes on to the next
		// line (or holds a bare CR) stays whole.
		{"middle, comment over two lines", "{\"s\": {\"hub\": 1, /* about\n b */ \"b\": 2}}", "{\"s\": {/* about\n b */ \"b\": 2}}"},
		{"last, comment over two lines", "{\"s\": {\"a\": 1, \"hub\": 2 /* x\n y */}}", "{\"s\": {\"a\": 1 /* x\n y */}}"},
		{"last, comment holding a CR", "{\"s\": {\"a\": 0, \"hub\": {}/*\r*/}}", "{\"s\": {\"a\": 0/*\r*/}}"},
		{"last, comment closed on its line", "{\"s\": {\n  \"a\": 1,\n  \"hub\": 2 /* ours */\n}}", "{\"s\": {\n  \"a\": 1\n}}"},
	} {
		got, _, err := deleteMember([]byte(tc.in), []string{"s"}, "hub")
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %v\n got %q\nwant %q", tc.name, err, got, tc.want)
		}
	}
}

func readClientFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "clients", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestInstallUninstall on every client file: install adds one entry and
// keeps the others; installing again changes nothing; uninstall gives
// back the file byte for byte.
func TestInstallUninstall(t *testing.T) {
	hub := HubEntry{Name: "mcp-hub", Command: "/opt/mcp-hub/mcp-hub", Args: []string{"--config", "/home/alice/hub.yaml", "serve"}}
	for _, tc := range []struct{ file, client string }{
		{"claude_desktop_config.json", "claude-desktop"},
		{"claude-code.mcp.json", "claude-code"},
		{"claude.json", "claude-code"},
		{"cursor-mcp.json", "cursor"},
		{"vscode-mcp.json", "vscode"},
		{"vscode-settings.json", "vscode"},
		{"windsurf-mcp_config.json", "windsurf"},
	} {
		data := readClientFile(t, tc.file)
		loc := FileLocation(tc.client, tc.file, data)
		before, err := Parse(loc, data, Env{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := Install(loc, data, hub, nil, hub.Command)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		after, err := Parse(loc, res.Data, Env{})
		if err != nil {
			t.Fatalf("%s after install: %v\n%s", tc.file, err, res.Data)
		}
		var names []string
		for _, s := range after {
			names = append(names, s.Name)
		}
		wantNames := []string{}
		for _, s := range before {
			wantNames = append(wantNames, s.Name)
		}
		if !res.Changed || !res.Added || !slices.Equal(names, append(wantNames, hub.Name)) || len(res.Kept) != len(before) {
			t.Errorf("%s: changed %v added %v, servers %v, kept %v", tc.file, res.Changed, res.Added, names, res.Kept)
		}
		last := after[len(after)-1]
		if last.Config.Command != hub.Command || !slices.Equal(last.Config.Args, hub.Args) {
			t.Errorf("%s: hub entry %+v", tc.file, last.Config)
		}
		if tc.client == "vscode" || tc.client == "claude-code" {
			if !strings.Contains(string(res.Data), `"type": "stdio"`) {
				t.Errorf("%s: entry without type stdio:\n%s", tc.file, res.Data)
			}
		}
		if strings.Contains(string(data), "//") && strings.Count(string(res.Data), "//") != strings.Count(string(data), "//") {
			t.Errorf("%s: comments changed:\n%s", tc.file, res.Data)
		}
		again, err := Install(loc, res.Data, hub, nil, hub.Command)
		if err != nil || again.Changed || again.Added {
			t.Errorf("%s: second install: changed %v added %v err %v", tc.file, again.Changed, again.Added, err)
		}
		back, removed, err := Uninstall(loc, res.Data, hub.Name, hub.Command)
		if err != nil || !removed || string(back) != string(data) {
			t.Errorf("%s: uninstall: removed %v err %v; file differs from the original:\n%s", tc.file, removed, err, back)
		}
	}
}

func TestInstallReplaceAndRefuse(t *testing.T) {
	data := readClientFile(t, "claude_desktop_config.json")
	loc := FileLocation("claude-desktop", "c.json", data)
	hub := HubEntry{Name: "hub", Command: "/bin/mcp-hub", Args: []string{"--config", "/h.yaml", "serve"}}
	res, err := Install(loc, data, hub, []string{"github", "postgres"}, hub.Command)
	if err != nil {
		t.Fatal(err)
	}
	servers, _ := Parse(loc, res.Data, Env{})
	var names []string
	for _, s := range servers {
		names = append(names, s.Name)
	}
	if want := []string{"filesystem", "brave-search", "memory", "sqlite", "hub"}; !slices.Equal(names, want) || !slices.Equal(res.Removed, []string{"github", "postgres"}) {
		t.Errorf("servers %v removed %v", names, res.Removed)
	}
	if !strings.Contains(string(res.Data), `"globalShortcut": "Alt+Space"`) || !strings.Contains(string(res.Data), `"menuBarEnabled": false`) {
		t.Errorf("other settings lost:\n%s", res.Data)
	}
	// A server named like the hub entry that is not mcp-hub is never overwritten.
	if _, err := Install(loc, data, HubEntry{Name: "github", Command: "/bin/mcp-hub"}, nil, "/bin/mcp-hub"); err == nil || !strings.Contains(err.Error(), "not mcp-hub") {
		t.Errorf("install over another server: %v", err)
	}
	if _, _, err := Uninstall(loc, data, "github", "/bin/mcp-hub"); err == nil {
		t.Error("uninstall removed a server that is not mcp-hub")
	}
}

// Of duplicate keys the client (JSON.parse, encoding/json) uses the last:
// reads and edits use that copy too.
func TestDuplicateKeysLastWins(t *testing.T) {
	t.Parallel()
	src := []byte(`{"mcpServers": {"ignored": {"command": "a"}}, "mcpServers": {"used": {"command": "b"}}}`)
	loc := FileLocation("cursor", "mcp.json", src)
	servers, err := Parse(loc, src, Env{})
	if err != nil || len(servers) != 1 || servers[0].Name != "used" {
		t.Fatalf("Parse = %+v, %v; want the last mcpServers", servers, err)
	}
	out, err := setMember(src, []string{"mcpServers"}, "hub", map[string]string{"command": "h"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"mcpServers": {"ignored": {"command": "a"}}, "mcpServers": {"used": {"command": "b"}, "hub": {"command":"h"}}}`
	if string(out) != want {
		t.Errorf("setMember edited\n%s\nwant\n%s", out, want)
	}
	if _, err := Install(loc, src, HubEntry{Name: "hub", Command: "/x/mcp-hub"}, nil, "/x/mcp-hub"); err == nil || !strings.Contains(err.Error(), `"mcpServers" twice`) {
		t.Errorf("Install on duplicate mcpServers: %v; want it refused", err)
	}
}
