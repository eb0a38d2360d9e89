package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clientconfig"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

func importCommand() *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "add a client's MCP servers (Claude Desktop, Claude Code, Cursor, VS Code, Windsurf, or a file) to the hub config",
		ArgsUsage: "SOURCE",
		Description: "SOURCE is " + strings.Join(clientconfig.Clients, ", ") + " (every config file of that client,\n" +
			"user and project level) or the path of a JSON file with mcpServers (or VS Code's servers).\n" +
			"The servers are added to the hub config (--config; created if missing) after the ones it has;\n" +
			"the rest of the file is left as it was. Entries it cannot serve are skipped, with the reason.\n" +
			"Values from the client (tokens in env, headers, arguments) are copied as they are and never printed.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Usage: "print the resulting hub config (secrets redacted) and change nothing"},
			&cli.StringFlag{Name: "name-prefix", Usage: "put `PREFIX` before every imported server name (to avoid clashes)"},
		},
		Action: runImport,
	}
}

func runImport(c *cli.Context) error {
	source := c.Args().First()
	if source == "" || c.Args().Len() > 1 {
		return cli.Exit("import needs one SOURCE: a client ("+strings.Join(clientconfig.Clients, ", ")+") or a file", exitConfig)
	}
	env := clientconfig.CurrentEnv()
	servers, files, err := readSource(source, env)
	if err != nil {
		return err
	}
	out := c.App.Writer
	if c.Bool("dry-run") {
		out = c.App.ErrWriter // stdout carries the file
	}
	if len(files) == 0 {
		locs, _ := clientconfig.Locations(source, env)
		var paths []string
		for _, l := range locs {
			if !slices.Contains(paths, l.Path) {
				paths = append(paths, l.Path)
			}
		}
		return cli.Exit(fmt.Sprintf("import: no config file of %s found; looked for:\n  %s\n(name the file instead: mcp-hub import PATH)", source, strings.Join(paths, "\n  ")), 1)
	}

	path := configPath(c)
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(abs)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("import: %w", err)
	}
	existed := err == nil
	names, existing, err := clientconfig.HubServers(abs, data)
	if err != nil {
		return cli.Exit("import: "+err.Error(), exitConfig)
	}
	self, _ := os.Executable()
	var secrets []string
	for _, cfg := range existing {
		secrets = append(secrets, (clientconfig.Server{Config: cfg}).Secrets()...)
	}

	fmt.Fprintf(out, "Importing from %s:\n", strings.Join(files, ", "))
	var add []clientconfig.Server
	for _, s := range servers {
		secrets = append(secrets, s.Secrets()...)
		s.Name = c.String("name-prefix") + s.Name
		why := s.Skip
		switch {
		case why != "":
		case s.IsHub(self):
			why = "it runs mcp-hub itself"
		case slices.Contains(names, s.Name):
			if sameServer(existing[s.Name], s.Config) {
				fmt.Fprintf(out, "  %-9s %-20s already in %s with the same settings\n", "unchanged", s.Name, filepath.Base(abs))
				continue
			}
			why = fmt.Sprintf("%s already has a server named %q (import with --name-prefix, or rename one)", filepath.Base(abs), s.Name)
		}
		if why != "" {
			fmt.Fprintf(out, "  %-9s %-20s %s\n", "skipped", s.Name, why)
			continue
		}
		line := fmt.Sprintf("  %-9s %-20s %s", "added", s.Name, s.Transport())
		if where := secretPlaces(s); len(where) > 0 {
			line += "; secret values (copied, never printed): " + strings.Join(where, ", ")
		}
		fmt.Fprintln(out, line)
		for _, n := range s.Notes {
			fmt.Fprintf(out, "  %-9s %-20s note: %s\n", "", "", n)
		}
		names = append(names, s.Name)
		add = append(add, s)
	}
	red := redact.New(secrets)
	if len(add) == 0 {
		fmt.Fprintf(out, "Nothing to add to %s.\n", abs)
		return nil
	}
	result, err := clientconfig.AddToHub(abs, data, add, files)
	if err != nil {
		return fmt.Errorf("import: %s: %w", abs, red.Error(err))
	}
	// What is written must load: the same check as `config check`, before
	// the file changes.
	if _, err := config.Parse(abs, result, builtin.Names()); err != nil {
		return fmt.Errorf("import: the result would not load (nothing written): %w", red.Error(err))
	}
	if c.Bool("dry-run") {
		fmt.Fprint(c.App.Writer, red.String(string(result)))
		fmt.Fprintf(out, "Dry run: %s not changed (%s would be added; secret values shown as %s).\n", abs, plural(len(add), "server"), redact.Redacted)
		return nil
	}
	backup := ""
	if existed {
		if backup, err = clientconfig.Backup(abs, time.Now()); err != nil {
			return err
		}
	}
	if err := clientconfig.WriteFile(abs, result, 0o600); err != nil {
		return err
	}
	fmt.Fprintf(out, "Wrote %s: %s added", abs, plural(len(add), "server"))
	if backup != "" {
		fmt.Fprintf(out, " (the file as it was: %s)", backup)
	}
	fmt.Fprintf(out, ".\nNext: mcp-hub config check --config %s\n", shellQuote(abs))
	if !strings.HasSuffix(source, ".json") && slices.Contains(clientconfig.Clients, source) {
		fmt.Fprintf(out, "Then: mcp-hub install %s --config %s --replace   (the client runs the hub instead of these servers)\n", source, shellQuote(abs))
	}
	printSandboxHint(out, add)
	if st, err := os.Stat(abs); err == nil && st.Mode().Perm()&0o077 != 0 && len(secrets) > 0 {
		fmt.Fprintf(out, "Warning: %s is readable by other users (%v) and holds the copied values: chmod 600 it.\n", abs, st.Mode().Perm())
	}
	return nil
}

// printSandboxHint says how to sandbox the stdio servers just imported:
// import keeps them as the client ran them, with the user's full rights.
func printSandboxHint(out io.Writer, add []clientconfig.Server) {
	var stdio []string
	for _, s := range add {
		if s.Config.Kind() == config.TransportStdio && !s.Config.Sandbox.On() {
			stdio = append(stdio, s.Name)
		}
	}
	if len(stdio) == 0 {
		return
	}
	fmt.Fprintf(out, "Sandbox: %s run with your full rights, as the client ran them. To confine one, add to its entry\n", strings.Join(stdio, ", "))
	fmt.Fprintln(out, "    sandbox: true                                                     (no network, a home of its own), or opened a little:")
	fmt.Fprintln(out, "    sandbox: {network: [api.example.com], write: [/path/it/edits]}")
	fmt.Fprintln(out, "  or put `sandbox_default: true` at the top of the file for every stdio server (docs/security.md, The sandbox).")
}

// readSource reads a client's files, or one file.
func readSource(source string, env clientconfig.Env) ([]clientconfig.Server, []string, error) {
	if slices.Contains(clientconfig.Clients, source) {
		servers, files, err := clientconfig.ReadClient(source, env)
		if err != nil {
			return nil, nil, cli.Exit("import: "+err.Error(), exitConfig)
		}
		return servers, files, nil
	}
	data, err := os.ReadFile(source)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(source, `/\.`) {
			return nil, nil, cli.Exit(fmt.Sprintf("import: %q is neither a client (%s) nor a file", source, strings.Join(clientconfig.Clients, ", ")), exitConfig)
		}
		return nil, nil, cli.Exit("import: "+err.Error(), exitConfig)
	}
	abs, _ := filepath.Abs(source)
	servers, err := clientconfig.Parse(clientconfig.FileLocation("", abs, data), data, env)
	if err != nil {
		return nil, nil, cli.Exit("import: "+err.Error(), exitConfig)
	}
	return servers, []string{abs}, nil
}

// sameServer reports whether two server settings are the same as far as
// reaching the server goes.
func sameServer(a, b config.Upstream) bool {
	return a.Command == b.Command && slices.Equal(a.Args, b.Args) && a.URL == b.URL && a.Cwd == b.Cwd &&
		a.Kind() == b.Kind() && mapsEqual(a.Env, b.Env) && mapsEqual(a.Headers, b.Headers)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// secretPlaces names where s holds values that are redacted in output.
func secretPlaces(s clientconfig.Server) []string {
	secrets := s.Secrets()
	var out []string
	for _, k := range s.EnvOrder {
		if slices.Contains(secrets, strings.TrimSpace(s.Config.Env[k])) {
			out = append(out, "env "+k)
		}
	}
	for _, k := range s.HeaderOrder {
		out = append(out, "header "+k)
	}
	for _, a := range s.Config.Args {
		if slices.ContainsFunc(secrets, func(v string) bool { return strings.Contains(a, v) }) {
			out = append(out, "arguments")
			break
		}
	}
	if s.Config.URL != "" && slices.ContainsFunc(secrets, func(v string) bool { return strings.Contains(s.Config.URL, v) }) {
		out = append(out, "url")
	}
	return out
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t'\"$`\\!*?&;|<>()[]{}#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
