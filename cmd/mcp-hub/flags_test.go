package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/urfave/cli/v2"
)

// leafCommands lists every command that runs, as the names a user types
// ("serve", "config check"), from the real command tree: a command added
// later is covered without editing the tests.
func leafCommands(cmds []*cli.Command, prefix []string) [][]string {
	var out [][]string
	for _, c := range cmds {
		path := append(slices.Clone(prefix), c.Name)
		if len(c.Subcommands) == 0 {
			out = append(out, path)
			continue
		}
		out = append(out, leafCommands(c.Subcommands, path)...)
	}
	return out
}

// seen is what a command saw of the global flags and its arguments.
type seen struct {
	config, logLevel string
	args             []string
}

// recordingApp is the real command tree (flags and all) with every action
// replaced by one that records what the command would have read.
func recordingApp(t *testing.T, got *seen) *cli.App {
	t.Helper()
	app := newApp(io.NopCloser(strings.NewReader("")), io.Discard, io.Discard)
	var replace func([]*cli.Command)
	replace = func(cmds []*cli.Command) {
		for _, c := range cmds {
			c.Before = nil
			c.Action = func(c *cli.Context) error {
				*got = seen{configPath(c), globalString(c, "log-level"), c.Args().Slice()}
				return nil
			}
			replace(c.Subcommands)
		}
	}
	replace(app.Commands)
	return app
}

// TestGlobalFlagsAnywhere: --config/-c and --log-level work before the
// command, after it, between a command and its subcommand, and after the
// command's arguments, for every command; the value closest to the command
// wins, and any flag beats MCP_HUB_CONFIG.
func TestGlobalFlagsAnywhere(t *testing.T) {
	leaves := leafCommands(newApp(nil, io.Discard, io.Discard).Commands, nil)
	if len(leaves) < 12 {
		t.Fatalf("only %d commands found: %v", len(leaves), leaves)
	}
	insert := func(path []string, at int, flags ...string) []string {
		args := append([]string{"mcp-hub"}, path[:at]...)
		args = append(args, flags...)
		return append(args, path[at:]...)
	}
	for _, path := range leaves {
		name := strings.Join(path, " ")
		type tc struct {
			name string
			args []string
			env  string
			want seen
		}
		var cases []tc
		for at := 0; at <= len(path); at++ {
			cases = append(cases,
				tc{fmt.Sprintf("--config after %d names", at), insert(path, at, "--config", "x.yaml"), "", seen{"x.yaml", "info", nil}},
				tc{"-c at position", insert(path, at, "-c", "x.yaml"), "", seen{"x.yaml", "info", nil}},
				tc{"--config= and --log-level", insert(path, at, "--config=x.yaml", "--log-level", "debug"), "", seen{"x.yaml", "debug", nil}},
				tc{"flag beats env", insert(path, at, "-c", "flag.yaml"), "env.yaml", seen{"flag.yaml", "info", nil}},
			)
		}
		cases = append(cases,
			tc{"closest wins", append(insert(path, 0, "--config", "outer.yaml", "--log-level", "error"), "--config", "inner.yaml"), "", seen{"inner.yaml", "error", nil}},
			tc{"after an argument", append(insert(path, len(path)), "ARG", "--config", "x.yaml", "MORE"), "", seen{"x.yaml", "info", []string{"ARG", "MORE"}}},
			tc{"after --, an argument", append(insert(path, len(path)), "ARG", "--", "--config", "x.yaml"), "", seen{"hub.yaml", "info", []string{"ARG", "--config", "x.yaml"}}},
			tc{"env alone", insert(path, len(path)), "env.yaml", seen{"env.yaml", "info", nil}},
		)
		for _, c := range cases {
			t.Run(name+"/"+c.name, func(t *testing.T) {
				t.Chdir(t.TempDir()) // no ./hub.yaml: the default is the fallback name
				t.Setenv("MCP_HUB_CONFIG", c.env)
				var got seen
				if code := runApp(recordingApp(t, &got), c.args); code != 0 {
					t.Fatalf("%q: exit %d", c.args, code)
				}
				if got.config != c.want.config || got.logLevel != c.want.logLevel || !slices.Equal(got.args, c.want.args) {
					t.Errorf("%q: config %q, log level %q, args %q; want %q, %q, %q",
						c.args, got.config, got.logLevel, got.args, c.want.config, c.want.logLevel, c.want.args)
				}
			})
		}
	}
}

// TestFlagsAfterCommandRun runs real commands with --config after their
// names, as the examples do.
func TestFlagsAfterCommandRun(t *testing.T) {
	cfg := fixture.WriteFile(t, "hub.yaml", "servers:\n  clock:\n    builtin: time\n")
	js := fixture.WriteFile(t, "claude_desktop_config.json", `{"mcpServers": {"clock": {"command": "definitely-not-installed-mcp-server"}}}`)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"config", "check", "--config", cfg}, 0, "config OK"},
		{[]string{"config", "--config", cfg, "check"}, 0, "config OK"},
		{[]string{"config", "check", "--config", js}, 1, "FAILED"},
		{[]string{"tools", "-c", cfg}, 0, "clock__"},
		{[]string{"servers", "--config", cfg, "--log-level", "warn"}, 0, "clock"},
		{[]string{"tools", "--config", filepath.Join(t.TempDir(), "missing.yaml")}, exitConfig, "missing.yaml: cannot read config"},
		{[]string{"tools", "--log-level", "loud", "-c", cfg}, exitConfig, `--log-level "loud"`},
	} {
		out, code := runMain(t, nil, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("mcp-hub %s: exit %d, want %d with %q:\n%s", strings.Join(tc.args, " "), code, tc.code, tc.want, out)
		}
	}
}

func TestHoistFlags(t *testing.T) {
	app := newApp(nil, io.Discard, io.Discard)
	for _, tc := range []struct{ in, want string }{
		{"serve --config x", "serve --config x"},
		{"search open issues --server gh -c x", "search --server gh -c x open issues"},
		{"chat -p hello --json", "chat -p hello --json"},
		{"chat hello --json more", "chat --json hello more"},
		{"--config a config check --config b", "--config a config check --config b"},
		{"config check extra --log-level warn", "config check --log-level warn extra"},
		{"search q --generate-bash-completion", "search q --generate-bash-completion"},
		{"search q -- --server x", "search -- q --server x"},
		{"search q --bogus", "search --bogus q"},
		{"help serve --config x", "--config x help serve"},
	} {
		got := strings.Join(hoistFlags(app, append([]string{"mcp-hub"}, strings.Fields(tc.in)...))[1:], " ")
		if got != tc.want {
			t.Errorf("hoistFlags(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"completion", "bash"}, 0, []string{"complete -o bashdefault -o default -o nospace -F _mcp-hub_bash_autocomplete mcp-hub", "--generate-bash-completion"}},
		{[]string{"completion", "zsh"}, 0, []string{"#compdef mcp-hub", "compdef _mcp-hub_zsh_autocomplete mcp-hub"}},
		{[]string{"completion", "fish"}, 0, []string{"complete -c mcp-hub", "-a 'import'", "-l config"}},
		{[]string{"completion", "tcsh"}, exitConfig, []string{"name a shell: bash, zsh or fish"}},
		// What the bash and zsh scripts ask: the commands, then a
		// command's flags (in a process of its own: urfave/cli reads
		// os.Args for it).
		{[]string{"--generate-bash-completion"}, 0, []string{"serve\n", "import\n", "install\n", "completion\n"}},
		{[]string{"install", "--cl", "--generate-bash-completion"}, 0, []string{"--client-config"}},
		{[]string{"serve", "--con", "--generate-bash-completion"}, 0, []string{"--config"}},
	} {
		out, code := runMain(t, nil, tc.args...)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d\n%s", tc.args, code, tc.code, out)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: output lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
}
