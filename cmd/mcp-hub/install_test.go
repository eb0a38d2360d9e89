package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/clientconfig"
)

// TestInstallReplaceOnlyWhatTheHubServes runs `install --replace` on
// client files against hub configs where the hub does and does not serve
// the client's entries: only an entry of the same name that is the same
// server, enabled, and whole in the chosen toolset is removed. A file
// with duplicate keys is refused unchanged.
func TestInstallReplaceOnlyWhatTheHubServes(t *testing.T) {
	t.Parallel()
	const hubServers = `servers:
  github:
    command: npx
    args: ["-y", "@modelcontextprotocol/server-github"]
  fetch:
    command: uvx
    args: ["mcp-server-fetch"]
  docs:
    url: "https://docs.example/mcp"
  off:
    command: off-server
    disabled: true
`
	const toolsets = `toolsets:
  web:
    servers:
      fetch: true
      docs: true
  partial:
    servers:
      github: [search_code]
      fetch: {exclude: [fetch_raw]}
      docs: true
`
	github := `"github": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}`
	fetch := `"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}`
	docs := `"docs": {"url": "https://docs.example/mcp"}`
	tests := []struct {
		name    string
		client  string
		toolset string
		removed []string // "" entries: none
		refused string   // non-empty: exit 2 with this, file unchanged
	}{
		{name: "same name same server", client: `{"mcpServers": {` + github + `, ` + fetch + `, ` + docs + `}}`, removed: []string{"github", "fetch", "docs"}},
		{name: "outside the toolset", client: `{"mcpServers": {` + github + `, ` + fetch + `, ` + docs + `}}`, toolset: "web", removed: []string{"fetch", "docs"}},
		{name: "cut down by the toolset", client: `{"mcpServers": {` + github + `, ` + fetch + `, ` + docs + `}}`, toolset: "partial", removed: []string{"docs"}},
		{name: "disabled in the hub", client: `{"mcpServers": {"off": {"command": "off-server"}}}`},
		{name: "same name other server", client: `{"mcpServers": {"github": {"command": "npx", "args": ["-y", "github-fork"]}, "docs": {"url": "https://other.example/mcp"}, "fetch": {"url": "https://fetch.example/mcp"}}}`},
		{name: "same server other name", client: `{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"]}, "my-docs": {"url": "https://docs.example/mcp"}}}`},
		{name: "duplicate server name", client: `{"mcpServers": {` + github + `, "github": {"command": "npx", "args": ["-y", "github-fork"]}}}`, refused: `the key "github" twice`},
		{name: "duplicate mcpServers", client: "{\"mcpServers\": {" + github + "},\n \"mcpServers\": {" + fetch + "}}", refused: `the key "mcpServers" twice (lines 1 and 2)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			client := filepath.Join(dir, "mcp.json")
			if err := os.WriteFile(client, []byte(tc.client), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := filepath.Join(dir, "hub.yaml")
			if err := os.WriteFile(cfg, []byte(hubServers+toolsets), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"install", "cursor", "--client-config", client, "--config", cfg, "--command", "/x/mcp-hub", "--replace"}
			if tc.toolset != "" {
				args = append(args, "--toolset", tc.toolset)
			}
			out, code := runMain(t, nil, args...)
			data, _ := os.ReadFile(client)
			if tc.refused != "" {
				if code != exitConfig || !strings.Contains(out, tc.refused) || string(data) != tc.client {
					t.Errorf("exit %d, want %d with %q and the file unchanged\n%s\nfile: %s", code, exitConfig, tc.refused, out, data)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, out)
			}
			before := names(t, client, []byte(tc.client))
			after := names(t, client, data)
			var gone []string
			for _, n := range before {
				if !slices.Contains(after, n) {
					gone = append(gone, n)
				}
			}
			if !slices.Equal(gone, tc.removed) || !slices.Contains(after, "hub") {
				t.Errorf("removed %v, want %v; entries now %v\n%s", gone, tc.removed, after, out)
			}
		})
	}
}

func names(t *testing.T, path string, data []byte) []string {
	t.Helper()
	servers, err := clientconfig.Parse(clientconfig.FileLocation("cursor", path, data), data, clientconfig.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range servers {
		out = append(out, s.Name)
	}
	return out
}

// TestRestoreRefusesCutShortBackup: the newest backup was cut short (as a
// full disk leaves one); `uninstall --restore` refuses it and leaves the
// client file as it is.
func TestRestoreRefusesCutShortBackup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	client := filepath.Join(dir, "mcp.json")
	orig := `{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}` + "\n"
	if err := os.WriteFile(client, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(cfg, []byte("servers:\n  clock:\n    builtin: time\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runMain(t, nil, "install", "cursor", "--client-config", client, "--config", cfg, "--command", "/x/mcp-hub"); code != 0 {
		t.Fatalf("install: exit %d\n%s", code, out)
	}
	backups, err := clientconfig.Backups(client)
	if err != nil || len(backups) != 1 {
		t.Fatalf("backups %v, %v; want one", backups, err)
	}
	if err := os.Truncate(backups[0], int64(len(orig)/2)); err != nil {
		t.Fatal(err)
	}
	installed, _ := os.ReadFile(client)
	out, code := runMain(t, nil, "uninstall", "cursor", "--client-config", client, "--restore")
	if code != 1 || !strings.Contains(out, "not a whole cursor config") || !strings.Contains(out, "unchanged") {
		t.Errorf("uninstall --restore of a cut-short backup: exit %d\n%s\nwant exit 1 refusing it", code, out)
	}
	if data, _ := os.ReadFile(client); string(data) != string(installed) {
		t.Errorf("the client file changed:\n%s", data)
	}
	if now, _ := clientconfig.Backups(client); len(now) != 1 {
		t.Errorf("backups after the refused restore: %v; want the one", now)
	}
}
