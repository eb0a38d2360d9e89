package clientconfig

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLocations(t *testing.T) {
	mac := Env{OS: "darwin", Home: "/Users/alice", Project: "/Users/alice/src/app"}
	linux := Env{OS: "linux", Home: "/home/alice", Project: "/home/alice/src/app"}
	xdg := Env{OS: "linux", Home: "/home/alice", ConfigHome: "/home/alice/.xdg", Project: "/p"}
	win := Env{OS: "windows", Home: `C:\Users\alice`, AppData: `C:\Users\alice\AppData\Roaming`, Project: `D:\src\app`}
	winNoAppData := Env{OS: "windows", Home: `C:\Users\alice`, Project: `D:\src\app`}
	for _, tc := range []struct {
		client string
		env    Env
		want   []string // scope path [section...]
	}{
		{"claude-desktop", mac, []string{"user /Users/alice/Library/Application Support/Claude/claude_desktop_config.json mcpServers"}},
		{"claude-desktop", linux, []string{"user /home/alice/.config/Claude/claude_desktop_config.json mcpServers"}},
		{"claude-desktop", xdg, []string{"user /home/alice/.xdg/Claude/claude_desktop_config.json mcpServers"}},
		{"claude-desktop", win, []string{`user C:\Users\alice\AppData\Roaming\Claude\claude_desktop_config.json mcpServers`}},
		{"claude-desktop", winNoAppData, []string{`user C:\Users\alice\AppData\Roaming\Claude\claude_desktop_config.json mcpServers`}},
		{"claude-code", linux, []string{
			"user /home/alice/.claude.json mcpServers",
			"project /home/alice/src/app/.mcp.json mcpServers",
			"local /home/alice/.claude.json projects /home/alice/src/app mcpServers"}},
		{"claude-code", win, []string{
			`user C:\Users\alice\.claude.json mcpServers`,
			`project D:\src\app\.mcp.json mcpServers`,
			`local C:\Users\alice\.claude.json projects D:\src\app mcpServers`}},
		{"cursor", mac, []string{"user /Users/alice/.cursor/mcp.json mcpServers", "project /Users/alice/src/app/.cursor/mcp.json mcpServers"}},
		{"cursor", win, []string{`user C:\Users\alice\.cursor\mcp.json mcpServers`, `project D:\src\app\.cursor\mcp.json mcpServers`}},
		{"vscode", mac, []string{
			"user /Users/alice/Library/Application Support/Code/User/settings.json mcp servers",
			"user /Users/alice/Library/Application Support/Code/User/mcp.json servers",
			"project /Users/alice/src/app/.vscode/mcp.json servers"}},
		{"vscode", linux, []string{
			"user /home/alice/.config/Code/User/settings.json mcp servers",
			"user /home/alice/.config/Code/User/mcp.json servers",
			"project /home/alice/src/app/.vscode/mcp.json servers"}},
		{"vscode", win, []string{
			`user C:\Users\alice\AppData\Roaming\Code\User\settings.json mcp servers`,
			`user C:\Users\alice\AppData\Roaming\Code\User\mcp.json servers`,
			`project D:\src\app\.vscode\mcp.json servers`}},
		{"windsurf", mac, []string{"user /Users/alice/.codeium/windsurf/mcp_config.json mcpServers"}},
		{"windsurf", win, []string{`user C:\Users\alice\.codeium\windsurf\mcp_config.json mcpServers`}},
	} {
		locs, err := Locations(tc.client, tc.env)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, l := range locs {
			got = append(got, strings.Join(append([]string{l.Scope, l.Path}, l.Section...), " "))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s on %s:\n got %q\nwant %q", tc.client, tc.env.OS, got, tc.want)
		}
	}
	if _, err := Locations("zed", mac); err == nil || !strings.Contains(err.Error(), "claude-desktop, claude-code") {
		t.Errorf("unknown client: %v", err)
	}
	if _, err := Locations("cursor", Env{OS: "linux"}); err == nil || !strings.Contains(err.Error(), "home directory is unknown") {
		t.Errorf("no home: %v", err)
	}
}

func TestInstallLocation(t *testing.T) {
	e := Env{OS: "linux", Home: "/h", Project: "/p"}
	for _, tc := range []struct{ client, scope, want, err string }{
		{"vscode", "", "/h/.config/Code/User/mcp.json", ""}, // never settings.json
		{"vscode", "project", "/p/.vscode/mcp.json", ""},
		{"claude-code", "", "/h/.claude.json", ""},
		{"claude-code", "local", "/h/.claude.json", ""},
		{"cursor", "project", "/p/.cursor/mcp.json", ""},
		{"claude-desktop", "project", "", "claude-desktop has no project config: scopes user"},
	} {
		loc, err := InstallLocation(tc.client, tc.scope, e)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s %s: error %v, want %q", tc.client, tc.scope, err, tc.err)
			}
			continue
		}
		if err != nil || loc.Path != tc.want {
			t.Errorf("%s %s: %v %v, want %s", tc.client, tc.scope, loc.Path, err, tc.want)
		}
	}
}

// TestParseClientFiles reads the real-world shaped files in
// testdata/clients: names in file order, how each is reached, and why the
// ones the hub cannot serve are skipped.
func TestParseClientFiles(t *testing.T) {
	e := Env{OS: "linux", Home: "/home/alice", Project: "/home/alice/src/shop"}
	for _, tc := range []struct {
		file    string
		client  string
		section []string
		want    []string // name: transport or skip reason
	}{
		{"claude_desktop_config.json", "claude-desktop", []string{"mcpServers"}, []string{
			"filesystem: stdio: npx (4 arguments)", "github: stdio: npx (2 arguments)", "brave-search: stdio: npx (2 arguments)",
			"postgres: stdio: npx (3 arguments)", "memory: stdio: npx (2 arguments)", "sqlite: stdio: uvx (3 arguments)"}},
		{"claude-code.mcp.json", "claude-code", []string{"mcpServers"}, []string{
			"sentry: streamable-http https://mcp.sentry.dev/mcp", "linear: sse https://mcp.linear.app/sse",
			"internal-api: streamable-http ${API_BASE_URL:-https://api.example.com}/mcp",
			"playwright: stdio: npx (1 argument)", "context7: stdio: npx (4 arguments)", "airtable: stdio: npx (2 arguments)"}},
		{"cursor-mcp.json", "cursor", []string{"mcpServers"}, []string{
			"linear: sse https://mcp.linear.app/sse", "notion: streamable-http https://mcp.notion.com/mcp",
			"github: streamable-http https://api.githubcopilot.com/mcp/", "stripe: streamable-http https://mcp.stripe.com/?api_key=REDACTED"}},
		{"vscode-mcp.json", "vscode", []string{"servers"}, []string{
			"fetch: stdio: uvx (1 argument)", "perplexity: stdio: npx (2 arguments)",
			"workspace-files: stdio: npx (3 arguments)", "github: streamable-http https://api.githubcopilot.com/mcp/"}},
		{"vscode-settings.json", "vscode", []string{"mcp", "servers"}, []string{"time: stdio: uvx (2 arguments)"}},
		{"windsurf-mcp_config.json", "windsurf", []string{"mcpServers"}, []string{
			"figma: streamable-http https://mcp.figma.com/mcp", "puppeteer: skip: disabled in the client",
			"slack: stdio: npx (2 arguments)",
			`realtime: skip: transport "ws" cannot be served by mcp-hub (stdio, streamable HTTP and SSE only)`,
			"hub: stdio: /usr/local/bin/mcp-hub (3 arguments)"}},
		{"claude.json", "claude-code", []string{"mcpServers"}, []string{"fetch: stdio: uvx (1 argument)"}},
		{"claude.json", "claude-code", []string{"projects", "/home/alice/src/shop", "mcpServers"}, []string{"shop-db: stdio: /home/alice/src/shop/bin/db-mcp (1 argument)"}},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "clients", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		loc := FileLocation(tc.client, tc.file, data)
		if len(tc.section) < 3 && !slices.Equal(loc.Section, tc.section) {
			t.Errorf("%s: section %v, want %v", tc.file, loc.Section, tc.section)
		}
		loc.Section = tc.section
		servers, err := Parse(loc, data, e)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		var got []string
		for _, s := range servers {
			if s.Skip != "" {
				got = append(got, s.Name+": skip: "+s.Skip)
			} else {
				got = append(got, s.Name+": "+s.Transport())
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s %v:\n got %q\nwant %q", tc.file, tc.section, got, tc.want)
		}
	}
}

func TestEntryVariablesAndSecrets(t *testing.T) {
	e := Env{OS: "linux", Home: "/home/alice", Project: "/work/app"}
	s := parseEntry("x", "f", []byte(`{"command": "${userHome}/bin/srv", "args": ["${workspaceFolder}", "--token", "abcd1234efgh",
		"--api-key=KEYVALUE99", "ghp_0123456789abcdef", "postgres://u:pw-secret@h/db", "--port", 8080],
		"env": {"TOKEN": "${env:MY_TOKEN}", "KEY": "${input:api-key}", "DEBUG": true}}`), e)
	if s.Skip != "" {
		t.Fatal(s.Skip)
	}
	c := s.Config
	if c.Command != "/home/alice/bin/srv" || c.Args[0] != "/work/app" || c.Args[7] != "8080" {
		t.Errorf("variables: %q %q", c.Command, c.Args)
	}
	if c.Env["TOKEN"] != "${MY_TOKEN}" || c.Env["KEY"] != "${API_KEY}" || c.Env["DEBUG"] != "true" {
		t.Errorf("env: %v", c.Env)
	}
	if len(s.Notes) != 1 || !strings.Contains(s.Notes[0], "${API_KEY}") {
		t.Errorf("notes: %q", s.Notes)
	}
	secrets := s.Secrets()
	for _, want := range []string{"abcd1234efgh", "KEYVALUE99", "ghp_0123456789abcdef", "pw-secret"} {
		if !slices.Contains(secrets, want) {
			t.Errorf("secrets %q lack %q", secrets, want)
		}
	}
	for _, not := range []string{"${MY_TOKEN}", "${API_KEY}", "8080", "/work/app"} {
		if slices.Contains(secrets, not) {
			t.Errorf("secrets %q hold %q, which is none", secrets, not)
		}
	}
}
