package clientconfig

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

var imported = []Server{
	{Name: "github", Config: config.Upstream{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"},
		Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_x", "NO": "no"}}, EnvOrder: []string{"GITHUB_PERSONAL_ACCESS_TOKEN", "NO"}},
	{Name: "linear", Config: config.Upstream{URL: "https://mcp.linear.app/sse", Transport: "sse", Headers: map[string]string{"Authorization": "Bearer t"}},
		HeaderOrder: []string{"Authorization"}},
}

// insertedOnce reports whether after is before with one run of bytes
// inserted: everything that was there is unchanged.
func insertedOnce(before, after string) bool {
	p := 0
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	return strings.HasSuffix(after, before[p:])
}

// TestAddToHub: servers imported into a hub config come after the ones it
// has, every other byte (comments, blank lines, quoting) stays, and the
// result loads.
func TestAddToHub(t *testing.T) {
	bundled, err := os.ReadFile("../../hub.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, in string
		spliced        bool // only inserted: every byte of in is still there
		want           []string
	}{
		{"bundled hub.yaml", "hub.yaml", string(bundled), true, []string{"time", "calc", "notes", "text", "github", "linear"}},
		{"servers last, comment at the end", "hub.yaml", "discovery: {enabled: true}\nservers:\n    a:   # four spaces\n        builtin: time\n\n# the end\n", true, []string{"a", "github", "linear"}},
		{"no servers section", "hub.yaml", "# mine\ndiscovery:\n  enabled: true\n", true, []string{"github", "linear"}},
		{"CRLF", "hub.yaml", "servers:\r\n  a:\r\n    builtin: time\r\n", true, []string{"a", "github", "linear"}},
		{"flow style", "hub.yaml", "# keep me\nservers: {a: {builtin: time}}\n", false, []string{"a", "github", "linear"}},
		{"empty servers", "hub.yaml", "servers:\ndiscovery: {enabled: false}\n", false, []string{"github", "linear"}},
		{"new file", "hub.yaml", "", false, []string{"github", "linear"}},
		{"JSON hub config", "claude.json", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n  },\n  \"other\": 1\n}\n", true, []string{"a", "github", "linear"}},
	} {
		out, err := AddToHub(tc.path, []byte(tc.in), imported, []string{"/from/file.json"})
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if tc.spliced && !insertedOnce(tc.in, string(out)) {
			t.Errorf("%s: more changed than an insertion:\n%s", tc.name, out)
		}
		if tc.name == "flow style" && !strings.Contains(string(out), "# keep me") {
			t.Errorf("%s: comment lost:\n%s", tc.name, out)
		}
		cfg, err := config.Parse(tc.path, out, nil)
		if err != nil {
			t.Errorf("%s: result does not load: %v\n%s", tc.name, err, out)
			continue
		}
		if !slices.Equal(cfg.ServerOrder, tc.want) {
			t.Errorf("%s: servers %v, want %v\n%s", tc.name, cfg.ServerOrder, tc.want, out)
		}
		gh := cfg.Servers["github"]
		if gh.Command != "npx" || !slices.Equal(gh.Args, imported[0].Config.Args) || gh.Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != "ghp_x" {
			t.Errorf("%s: github reads back as %+v", tc.name, gh.Upstream)
		}
		if l := cfg.Servers["linear"]; l.Transport != "sse" || l.Headers["Authorization"] != "Bearer t" {
			t.Errorf("%s: linear reads back as %+v", tc.name, l.Upstream)
		}
	}
}

func TestHubServers(t *testing.T) {
	names, configs, err := HubServers("hub.yaml", []byte("servers:\n  a:\n    command: x\n    args: [\"1\"]\n  b:\n    url: http://h/mcp\n"))
	if err != nil || !slices.Equal(names, []string{"a", "b"}) || configs["a"].Command != "x" || configs["b"].URL != "http://h/mcp" {
		t.Errorf("%v %v %v", names, configs, err)
	}
	if _, _, err := HubServers("hub.yaml", []byte("servers: [\n")); err == nil {
		t.Error("a broken hub.yaml was read")
	}
}
