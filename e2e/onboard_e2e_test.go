package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clientconfig"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

const clientsDir = "../testdata/clients"

// offline keeps `config check` on imported configs on this machine: no
// npx or uvx on PATH, and HTTP(S) to anywhere but 127.0.0.1 goes to a
// closed local port (the hub's HTTP client honours the proxy variables).
func offline(t *testing.T) []string {
	return []string{"PATH=" + t.TempDir(), "HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1", "NO_PROXY="}
}

// sourceSecrets are the values of a client file that must never be
// printed: what clientconfig counts as secret, and every value the
// testdata marks with TESTSECRET.
func sourceSecrets(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	servers, err := clientconfig.Parse(clientconfig.FileLocation("", file, data), data, clientconfig.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range servers {
		out = append(out, s.Secrets()...)
	}
	if strings.Contains(string(data), "TESTSECRET") && !slices.ContainsFunc(out, func(s string) bool { return strings.Contains(s, "TESTSECRET") }) {
		t.Fatalf("%s: the secrets found %q miss the TESTSECRET values", file, out)
	}
	return out
}

func assertNoSecret(t *testing.T, what, out string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("%s printed the secret %q:\n%s", what, s, out)
		}
	}
	if strings.Contains(out, "TESTSECRET") {
		t.Errorf("%s printed a TESTSECRET value:\n%s", what, out)
	}
}

// TestImportClientFiles (issue 13, acceptance 1): each client file imports
// into a hub config with the same server names (less the entries the hub
// cannot serve, each reported with its reason); `config check` accepts it
// (exit 0, or 1 when servers cannot start here); no secret is printed by
// import, --dry-run or config check.
func TestImportClientFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file    string
		names   []string
		skipped []string
	}{
		{"claude_desktop_config.json", []string{"filesystem", "github", "brave-search", "postgres", "memory", "sqlite"}, nil},
		{"claude-code.mcp.json", []string{"sentry", "linear", "internal-api", "playwright", "context7", "airtable"}, nil},
		{"cursor-mcp.json", []string{"linear", "notion", "github", "stripe"}, nil},
		{"vscode-mcp.json", []string{"fetch", "perplexity", "workspace-files", "github"}, nil},
		{"windsurf-mcp_config.json", []string{"figma", "slack"}, []string{
			"puppeteer            disabled in the client", `realtime             transport "ws" cannot be served`, "hub                  it runs mcp-hub itself"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			src, err := filepath.Abs(filepath.Join(clientsDir, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			secrets := sourceSecrets(t, src)
			cfg := filepath.Join(t.TempDir(), "hub.yaml")

			out, code := runMain(t, nil, "import", src, "--dry-run", "--config", cfg)
			if code != 0 || !strings.Contains(out, "servers:") || !strings.Contains(out, "Dry run") {
				t.Fatalf("import --dry-run: exit %d\n%s", code, out)
			}
			assertNoSecret(t, "import --dry-run", out, secrets)
			if _, err := os.Stat(cfg); err == nil {
				t.Fatal("--dry-run wrote the config")
			}

			out, code = runMain(t, nil, "import", src, "--config", cfg)
			if code != 0 {
				t.Fatalf("import: exit %d\n%s", code, out)
			}
			assertNoSecret(t, "import", out, secrets)
			// Imported stdio servers stay as the client ran them; import says
			// how to sandbox them (issue 36).
			if strings.Contains(out, "stdio") && !strings.Contains(out, "sandbox_default: true") {
				t.Errorf("import added stdio servers without saying how to sandbox them:\n%s", out)
			}
			for _, s := range tc.skipped {
				if !strings.Contains(out, "skipped   "+s) {
					t.Errorf("import output lacks %q:\n%s", "skipped   "+s, out)
				}
			}
			data, err := os.ReadFile(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if fi, _ := os.Stat(cfg); fi.Mode().Perm() != 0o600 {
				t.Errorf("a new hub config holding secrets has mode %v, want 0600", fi.Mode().Perm())
			}
			parsed, err := config.Parse(cfg, data, builtin.Names())
			if err != nil {
				t.Fatalf("imported config: %v\n%s", err, data)
			}
			if !slices.Equal(parsed.ServerOrder, tc.names) {
				t.Errorf("servers %v, want %v", parsed.ServerOrder, tc.names)
			}

			out, code = runMain(t, offline(t), "config", "check", "--config", cfg)
			if code != 0 && code != 1 {
				t.Errorf("config check: exit %d, want 0 or 1 (servers that cannot start here)\n%s", code, out)
			}
			if !strings.Contains(out, "config OK") {
				t.Errorf("config check did not accept the config:\n%s", out)
			}
			assertNoSecret(t, "config check", out, secrets)

			// Again: nothing new, the file is left alone.
			out, code = runMain(t, nil, "import", src, "--config", cfg)
			after, _ := os.ReadFile(cfg)
			if code != 0 || !strings.Contains(out, "Nothing to add") || string(after) != string(data) {
				t.Errorf("second import: exit %d, file changed %v\n%s", code, string(after) != string(data), out)
			}
		})
	}
}

// TestImportIntoExistingConfig: imported servers follow the bundled
// hub.yaml's own, the rest of the file is unchanged, clashes are skipped
// (or renamed with --name-prefix), and a backup is kept.
func TestImportIntoExistingConfig(t *testing.T) {
	t.Parallel()
	bundled, err := os.ReadFile("../hub.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "hub.yaml")
	clash := strings.Replace(string(bundled), "  text:\n", "  github:\n    builtin: text\n  text:\n", 1)
	if err := os.WriteFile(cfg, []byte(clash), 0o644); err != nil {
		t.Fatal(err)
	}
	src, _ := filepath.Abs(filepath.Join(clientsDir, "claude_desktop_config.json"))
	out, code := runMain(t, nil, "import", src, "-c", cfg)
	if code != 0 || !strings.Contains(out, `skipped   github               hub.yaml already has a server named "github"`) {
		t.Fatalf("import: exit %d\n%s", code, out)
	}
	data, _ := os.ReadFile(cfg)
	if !strings.HasPrefix(string(data), clash[:strings.Index(clash, "\n# Tool discovery")]) ||
		!strings.HasSuffix(string(data), clash[strings.Index(clash, "\n# Tool discovery"):]) {
		t.Errorf("the existing config changed beyond the inserted servers:\n%s", data)
	}
	if backups, _ := clientconfig.Backups(cfg); len(backups) != 1 {
		t.Errorf("backups %v, want one", backups)
	}
	if !strings.Contains(out, "is readable by other users") {
		t.Errorf("no warning about a 0644 file holding copied secrets:\n%s", out)
	}
	out, code = runMain(t, nil, "import", src, "-c", cfg, "--name-prefix", "cd-")
	parsed, err := config.Load(cfg, builtin.Names())
	if code != 0 || err != nil || !slices.Contains(parsed.ServerOrder, "cd-github") || !slices.Contains(parsed.ServerOrder, "cd-filesystem") {
		t.Errorf("--name-prefix: exit %d, %v, servers %v\n%s", code, err, parsed.ServerOrder, out)
	}
}

// TestInstallClaudeDesktopTwice (issue 13, acceptance 2): install run twice
// on a Claude Desktop file leaves exactly one hub entry that runs the
// binary with serve, keeps the other servers and settings, and one backup;
// uninstall takes the entry out, and --restore puts the backup back.
func TestInstallClaudeDesktopTwice(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orig, err := os.ReadFile(filepath.Join(clientsDir, "claude_desktop_config.json"))
	if err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(client, orig, 0o644)
	cfg := fixture.WriteFile(t, "hub.yaml", "servers:\n  clock:\n    builtin: time\n  github:\n    command: npx\n    args: [\"-y\", \"@modelcontextprotocol/server-github\"]\n")
	bin := filepath.Join(dir, "bin", "mcp-hub")

	for i := range 2 {
		out, code := runMain(t, nil, "install", "claude-desktop", "--client-config", client, "--config", cfg, "--command", bin)
		if code != 0 {
			t.Fatalf("install %d: exit %d\n%s", i+1, code, out)
		}
		if i == 1 && !strings.Contains(out, "nothing changed") {
			t.Errorf("second install changed something:\n%s", out)
		}
	}
	data, _ := os.ReadFile(client)
	loc := clientconfig.FileLocation("claude-desktop", client, data)
	servers, err := clientconfig.Parse(loc, data, clientconfig.Env{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	hubs := 0
	for _, s := range servers {
		names = append(names, s.Name)
		if s.IsHub("") {
			hubs++
			if s.Name != "hub" || s.Config.Command != bin || !slices.Equal(s.Config.Args, []string{"--config", cfg, "serve"}) {
				t.Errorf("hub entry %s: %s %q", s.Name, s.Config.Command, s.Config.Args)
			}
		}
	}
	if want := []string{"filesystem", "github", "brave-search", "postgres", "memory", "sqlite", "hub"}; hubs != 1 || !slices.Equal(names, want) {
		t.Errorf("%d hub entries; servers %v, want %v", hubs, names, want)
	}
	if !strings.Contains(string(data), `"preferences": {`) || !strings.Contains(string(data), `"globalShortcut": "Alt+Space"`) {
		t.Errorf("Claude Desktop's own settings lost:\n%s", data)
	}
	backups, _ := clientconfig.Backups(client)
	if len(backups) != 1 {
		t.Fatalf("backups %v, want exactly one", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != string(orig) {
		t.Errorf("the backup is not the original file")
	}

	// --replace: github is served by the hub now.
	out, code := runMain(t, nil, "install", "claude-desktop", "--client-config", client, "--config", cfg, "--command", bin, "--replace")
	data, _ = os.ReadFile(client)
	if code != 0 || !strings.Contains(out, "removed (now served by the hub): github") || strings.Contains(string(data), "server-github") {
		t.Errorf("--replace: exit %d\n%s\n%s", code, out, data)
	}

	out, code = runMain(t, nil, "uninstall", "claude-desktop", "--client-config", client)
	data, _ = os.ReadFile(client)
	if code != 0 || strings.Contains(string(data), bin) || !strings.Contains(string(data), `"filesystem"`) {
		t.Errorf("uninstall: exit %d\n%s\n%s", code, out, data)
	}
	out, code = runMain(t, nil, "uninstall", "claude-desktop", "--client-config", client, "--restore")
	data, _ = os.ReadFile(client)
	if code != 0 || !strings.Contains(out, "restored") {
		t.Errorf("uninstall --restore: exit %d\n%s", code, out)
	}
	// The newest backup is the file before uninstall: the hub without github.
	if !strings.Contains(string(data), bin) || strings.Contains(string(data), "server-github") {
		t.Errorf("restored file:\n%s", data)
	}
}

func TestInstallErrors(t *testing.T) {
	dir := t.TempDir()
	client := filepath.Join(dir, "mcp.json")
	os.WriteFile(client, []byte(`{"mcpServers": {"hub": {"command": "npx", "args": ["something-else"]}}}`), 0o644)
	cfg := fixture.WriteFile(t, "hub.yaml", "servers:\n  clock:\n    builtin: time\n")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"install", "zed"}, exitConfig, "install needs one CLIENT"},
		{[]string{"install", "cursor", "--client-config", client, "-c", cfg, "--command", "/x/mcp-hub"}, exitConfig, `already has a server named "hub" that is not mcp-hub`},
		{[]string{"install", "cursor", "--client-config", client, "-c", filepath.Join(dir, "none.yaml")}, exitConfig, "the hub config"},
		{[]string{"install", "cursor", "--client-config", client, "-c", cfg, "--toolset", "nope", "--command", "/x/mcp-hub"}, exitConfig, `no toolset "nope"`},
		{[]string{"install", "claude-desktop", "--scope", "project", "-c", cfg}, exitConfig, "claude-desktop has no project config"},
		{[]string{"uninstall", "cursor", "--client-config", client}, exitConfig, "is not mcp-hub"},
		{[]string{"uninstall", "cursor", "--client-config", client, "--restore"}, 1, "no backup"},
		{[]string{"import", "nonesuch"}, exitConfig, "neither a client"},
	} {
		out, code := runMain(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("mcp-hub %s: exit %d, want %d with %q\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, out)
		}
	}
	if b, _ := os.ReadFile(client); !strings.Contains(string(b), "something-else") {
		t.Errorf("a refused install changed the file: %s", b)
	}
}

// TestImportWithoutHome: a file imports where no home directory is known
// (a service's environment); a client name says what is missing.
func TestImportWithoutHome(t *testing.T) {
	src, _ := filepath.Abs(filepath.Join(clientsDir, "cursor-mcp.json"))
	cfg := filepath.Join(t.TempDir(), "hub.yaml")
	if out, code := runMain(t, []string{"HOME="}, "import", src, "-c", cfg); code != 0 {
		t.Errorf("import FILE without HOME: exit %d\n%s", code, out)
	}
	if out, code := runMain(t, []string{"HOME="}, "import", "cursor", "-c", cfg); code != exitConfig || !strings.Contains(out, "home directory is unknown") {
		t.Errorf("import cursor without HOME: exit %d\n%s", code, out)
	}
}

// TestInstallCursorNameLimit: Cursor drops a tool whose entry name and tool
// name together pass 60 characters. `install cursor` has the hub it
// registers cut names to fit; run as Cursor would run it, every tool the
// hub lists fits with the entry's name, the same names on every start. An
// entry name that leaves too little room is refused.
func TestInstallCursorNameLimit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	client := filepath.Join(dir, "mcp.json")
	os.WriteFile(client, []byte(`{"mcpServers": {}}`), 0o644)
	const server = "a-text-server-with-a-name-long-enough-to-matter"
	cfg := fixture.WriteFile(t, "hub.yaml", "servers:\n  "+server+":\n    builtin: text\n  clock:\n    builtin: time\n")
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	const entry = "my-hub"
	if out, code := runMain(t, nil, "install", "cursor", "--client-config", client, "-c", cfg, "--command", self, "--name", entry); code != 0 {
		t.Fatalf("install cursor: exit %d\n%s", code, out)
	}
	data, _ := os.ReadFile(client)
	var file struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	e := file.MCPServers[entry]
	if want := []string{"--config", cfg, "serve", "--max-name-length", strconv.Itoa(60 - len(entry))}; !slices.Equal(e.Args, want) {
		t.Fatalf("cursor entry args %q, want %q", e.Args, want)
	}
	list := func() []string {
		cmd := exec.Command(e.Command, e.Args...)
		cmd.Env = append(os.Environ(), envAsMain+"=1")
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "cursor-like", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, fixture.Legacy())
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		defer cs.Close()
		var names []string
		for tool, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tool.Name)
		}
		return names
	}
	first := list()
	cut := 0
	for _, name := range first {
		if len(entry)+len(name) > 60 {
			t.Errorf("%s: %d characters with the entry name %q, Cursor's limit is 60", name, len(entry)+len(name), entry)
		}
		if strings.HasPrefix(name, "a-text-server") && len(name) == 60-len(entry) {
			cut++
		}
	}
	if cut == 0 {
		t.Errorf("no name was cut (%v): the test's server name is too short to test anything", first)
	}
	if again := list(); !slices.Equal(first, again) {
		t.Errorf("names changed across a restart:\n%v\n%v", first, again)
	}
	long := strings.Repeat("n", 40)
	if out, code := runMain(t, nil, "install", "cursor", "--client-config", client, "-c", cfg, "--command", self, "--name", long); code != exitConfig || !strings.Contains(out, "choose a shorter --name") {
		t.Errorf("install cursor --name %s: exit %d\n%s", long, code, out)
	}
}
