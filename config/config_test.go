package config

// Loading a config file: every mistake named by file, line and key; ${VAR}
// expansion; the Claude Desktop JSON form; and a fuzz target.
//
//	go test -run '^$' -fuzz '^FuzzParseConfig$' -fuzztime 20s ./config

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/builtin"
)

// parseConfig and loadConfig read a config as the hub does, knowing its
// builtin servers.
func parseConfig(path string, data []byte) (*Config, error) {
	return Parse(path, data, builtin.Names())
}

func loadConfig(path string) (*Config, error) { return Load(path, builtin.Names()) }

// TestConfigErrors: every config mistake is reported as file:line, the
// server, and what to change.
func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name, path, doc, want string
	}{
		{"unknown server key", "/etc/hub.yaml", "servers:\n  a:\n    command: x\n    comand: y\n",
			"/etc/hub.yaml:4: server 'a': unknown key 'comand'; did you mean 'command'? (check the spelling; see the config reference in README.md)"},
		{"unknown filter key", "/etc/hub.yaml", "servers:\n  a:\n    command: x\n  b:\n    command: y\n    tools: {alow: [a], deny: [b]}\n",
			"/etc/hub.yaml:6: server 'b': unknown key 'alow'; did you mean 'allow'?"},
		{"unknown top-level key", "hub.yaml", "serverz:\n  a:\n    command: x\n",
			"hub.yaml:1: unknown key 'serverz'; did you mean 'servers'?"},
		{"missing command", "hub.yaml", "servers:\n  a:\n    args: [x]\n",
			"hub.yaml:2: server 'a': no transport: set one of 'command' (stdio), 'url' (HTTP) or 'builtin'"},
		{"bad url", "hub.yaml", "servers:\n  remote:\n    url: localhost:8080/mcp\n",
			`hub.yaml:2: server 'remote': url "localhost:8080/mcp" is not an http(s) URL: write it like http://127.0.0.1:8080/mcp`},
		{"bad transport", "hub.yaml", "servers:\n  r:\n    url: http://127.0.0.1:1/mcp\n    transport: websocket\n",
			`hub.yaml:2: server 'r': transport "websocket" is unknown: use 'streamable-http' (default) or 'sse'`},
		{"duplicate server", "hub.yaml", "servers:\n  a:\n    command: x\n  a:\n    command: y\n",
			"hub.yaml:4: 'a' is defined twice (first at line 2): server names and keys must be unique; rename or remove one"},
		{"bad builtin", "hub.yaml", "servers:\n  t:\n    builtin: clock\n",
			"hub.yaml:3: server 't': unknown builtin 'clock'; available: calc, notes, text, time"},
		{"no servers", "hub.yaml", "servers: {}\n",
			"hub.yaml: no servers configured: add at least one under 'servers:' (see the bundled hub.yaml)"},
		{"empty file", "hub.yaml", "",
			"hub.yaml: config is empty: add a 'servers:' section"},
		{"bad duration", "hub.yaml", "servers:\n  a:\n    command: x\n    timeout: soon\n",
			`hub.yaml:4: server 'a': invalid duration: write it like 30s or 2m`},
		{"bad duration outside servers", "hub.yaml", "servers:\n  a:\n    command: x\nrestart:\n  max_backoff: later\n",
			`hub.yaml:5: invalid duration: write it like 30s or 2m`},
		{"relist_wait too long", "hub.yaml", "servers:\n  a:\n    command: x\ndiscovery:\n  relist_wait: 1m\n",
			"hub.yaml:5: discovery.relist_wait must be between 0 (never wait) and 10s"},
		{"max_name_length out of range", "hub.yaml", "servers:\n  a:\n    command: x\nmax_name_length: 10\n",
			"hub.yaml:4: max_name_length must be between 24 and 64"},
		{"unknown isolation", "hub.yaml", "servers:\n  a:\n    command: x\n    isolation: per-user\n",
			"hub.yaml:4: server 'a': isolation must be one of shared, principal or session"},
		{"isolation of an http server", "hub.yaml", "servers:\n  r:\n    url: http://127.0.0.1:1/mcp\n    isolation: principal\n",
			"hub.yaml:4: server 'r': isolation applies to stdio servers only"},
		{"negative max_isolated_processes", "hub.yaml", "servers:\n  a:\n    command: x\n    isolation: session\n    max_isolated_processes: -1\n",
			"hub.yaml:5: server 'a': max_isolated_processes must be positive"},
		{"bad boolean", "hub.yaml", "servers:\n  a:\n    command: x\n    disabled: perhaps\n",
			"hub.yaml:4: server 'a': key servers.a.disabled: expected true or false"},
		{"yaml syntax", "hub.yaml", "servers:\n  a:\n    command: x\n\tbad",
			"hub.yaml:3: invalid YAML: found a tab character"},
		{"json without command", "/home/u/claude_desktop_config.json", "{\n  \"mcpServers\": {\n    \"fs\": {\"args\": [\"x\"]}\n  }\n}\n",
			"/home/u/claude_desktop_config.json:3: server 'fs': no transport: set one of 'command' (stdio), 'url' (HTTP) or 'builtin'"},
		{"json duplicate server", "c.json", `{"mcpServers": {"fs": {"command": "x"}, "fs": {"command": "y"}}}`,
			"c.json: server 'fs' is defined twice in 'mcpServers': server names must be unique; rename or remove one"},
		{"json syntax", "c.json", "{\"mcpServers\": {\n\"fs\": {\"command\": \"x\",}}}",
			"c.json:2: invalid JSON: invalid character '}'"},
		{"json without mcpServers", "c.json", `{"globalShortcut": "x"}`,
			`c.json: no 'mcpServers' object: a JSON config must look like Claude Desktop's {"mcpServers": {...}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(tc.path, []byte(tc.doc))
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.doc)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("error is %T, want *Error (exit code 2)", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error:\n got: %s\nwant: %s", err, tc.want)
			}
		})
	}
}

// TestConfigExpansionAndJSON: ${VAR} and ${VAR:-default} expand in every
// value, unset variables warn with file:line, and a Claude Desktop JSON
// file loads as-is (other apps' keys ignored, "type" mapped to transport).
func TestConfigExpansionAndJSON(t *testing.T) {
	t.Setenv("AG_TOKEN", "tok-123456")
	t.Setenv("AG_EMPTY", "")
	doc := "servers:\n" +
		"  web:\n    url: ${AG_URL:-http://127.0.0.1:9/mcp}\n    headers:\n      Authorization: Bearer ${AG_TOKEN}\n" +
		"  proc:\n    command: ${AG_UNSET}echo\n    args: [\"${AG_EMPTY:-fallback}\", \"$HOME\"]\n    timeout: ${AG_TIMEOUT:-90}\n    prefix: \"\"\n"
	cfg, err := parseConfig("hub.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.ServerOrder, []string{"web", "proc"}) {
		t.Errorf("server order = %v", cfg.ServerOrder)
	}
	web, proc := cfg.Servers["web"], cfg.Servers["proc"]
	if web.URL != "http://127.0.0.1:9/mcp" || web.Headers["Authorization"] != "Bearer tok-123456" || web.Name != "web" {
		t.Errorf("web = %+v", web.Upstream)
	}
	if proc.Command != "echo" || !slices.Equal(proc.Args, []string{"fallback", "$HOME"}) || time.Duration(proc.Timeout) != 90*time.Second {
		t.Errorf("proc = %+v", proc.Upstream)
	}
	if proc.Prefix == nil || *proc.Prefix != "" {
		t.Errorf("prefix \"\" not kept: %v", proc.Prefix)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], "hub.yaml:7: environment variable AG_UNSET is not set") {
		t.Errorf("warnings = %q", cfg.Warnings)
	}
	if !slices.Contains(cfg.Secrets, "tok-123456") {
		t.Errorf("expanded values are not recorded as secrets: %q", cfg.Secrets)
	}

	js := `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${AG_DIR:-/tmp}"], "env": {"KEY": "${AG_TOKEN}"}, "autoApprove": ["read"]},
    "remote": {"type": "http", "url": "http://127.0.0.1:1/mcp", "headers": {"X-Key": "${AG_TOKEN}"}},
    "legacy": {"type": "sse", "url": "http://127.0.0.1:2/sse", "disabled": true}
  }
}`
	cfg, err = parseConfig("claude_desktop_config.json", []byte(js))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cfg.ServerOrder, []string{"fs", "remote", "legacy"}) || cfg.Path != "claude_desktop_config.json" {
		t.Errorf("order %v, path %s", cfg.ServerOrder, cfg.Path)
	}
	fs, remote, legacy := cfg.Servers["fs"], cfg.Servers["remote"], cfg.Servers["legacy"]
	if fs.Command != "npx" || fs.Args[2] != "/tmp" || fs.Env["KEY"] != "tok-123456" {
		t.Errorf("fs = %+v", fs.Upstream)
	}
	if remote.Kind() != TransportStreamable || remote.Headers["X-Key"] != "tok-123456" {
		t.Errorf("remote = %+v", remote.Upstream)
	}
	if legacy.Kind() != TransportSSE || !legacy.Disabled {
		t.Errorf("legacy = %+v", legacy.Upstream)
	}
	// LoadConfig reads files; a missing one says how to get one.
	_, err = loadConfig(filepath.Join(t.TempDir(), "hub.yaml"))
	if err == nil || !strings.Contains(err.Error(), "cannot read config") || !strings.Contains(err.Error(), "--config") {
		t.Errorf("missing file: %v", err)
	}
}

// FuzzParseConfig: ParseConfig never panics on any bytes, and every error
// it returns is (or wraps) a *Error, which the CLI turns into exit
// code 2 with the file name. The same bytes are tried as hub.yaml and as a
// Claude Desktop JSON file.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		"servers:\n  fs:\n    command: npx\n    args: [-y, server-filesystem, /tmp]\n",
		"servers:\n  w:\n    url: http://127.0.0.1:8080/mcp\n    transport: sse\n    headers: {Authorization: Bearer ${TOKEN:-x}}\n",
		"servers:\n  b:\n    builtin: time\n    defer_loading: true\n    prefix: \"\"\n" +
			"discovery: {enabled: true, defer_all: true, max_search_results: 3}\n" +
			"toolsets:\n  ro:\n    servers:\n      b: [now]\n",
		"servers:\n  a: &x\n    command: a\n  b: *x\n",
		"servers:\n  a:\n    command: x\n    timeout: 90\n    tools: {allow: [read_*], deny: [write]}\nrestart: {initial_backoff: 1s, max_backoff: 10s, unhealthy_after: 3}\n",
		"toolsets:\n  t:\n    servers:\n      nope: {exclude: [a]}\n",
		"servers: []\n",
		"servers:\n  x:\n",
		"serverz: {}\n",
		"\t- : :\n",
		"",
		`{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "x"], "env": {"K": "${HOME}"}}}}`,
		`{"mcpServers": {"r": {"type": "http", "url": "http://localhost:1/mcp", "autoApprove": []}}}`,
		`{"servers": {"v": {"serverUrl": "https://example.com/sse", "type": "sse"}}}`,
		`{"mcpServers": {"": {}}}`,
		`{"mcpServers": 5}`,
	} {
		f.Add([]byte(seed), strings.HasPrefix(seed, "{"))
	}
	f.Fuzz(func(t *testing.T, data []byte, asJSON bool) {
		path := "hub.yaml"
		if asJSON {
			path = "claude_desktop_config.json"
		}
		cfg, err := parseConfig(path, data)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("parseConfig(%q) error is %T, not a *Error: %v", data, err, err)
			}
			if ce.Path == "" {
				t.Fatalf("parseConfig(%q): Error without a path: %v", data, err)
			}
			return
		}
		if cfg == nil {
			t.Fatalf("parseConfig(%q): nil config and nil error", data)
		}
		// What the hub relies on for a config that loaded.
		if len(cfg.ServerOrder) != len(cfg.Servers) {
			t.Fatalf("parseConfig(%q): ServerOrder %q does not match the %d servers", data, cfg.ServerOrder, len(cfg.Servers))
		}
		for _, name := range cfg.ServerOrder {
			s := cfg.Servers[name]
			if s == nil || s.Name != name {
				t.Fatalf("parseConfig(%q): server %q is nil or misnamed", data, name)
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("parseConfig(%q) accepted server %q that does not validate: %v", data, name, err)
			}
		}
	})
}
