package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clientconfig"
)

// clientFlags pick the client file install and uninstall edit.
func clientFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "client-config", Usage: "edit this client config `FILE` instead of the client's usual one"},
		&cli.StringFlag{Name: "scope", Usage: "`SCOPE`: user (default), project (the project's file: .mcp.json, .cursor/mcp.json, .vscode/mcp.json) or local (Claude Code: this project in ~/.claude.json)"},
		&cli.StringFlag{Name: "name", Value: "hub", Usage: "the hub's entry `NAME` in the client"},
	}
}

func installCommand() *cli.Command {
	return &cli.Command{
		Name:      "install",
		Usage:     "register the hub in a client's config (" + strings.Join(clientconfig.Clients, ", ") + ")",
		ArgsUsage: "CLIENT",
		Description: "Adds one entry that runs this binary: {\"command\": \"/abs/mcp-hub\", \"args\": [\"--config\", \"/abs/hub.yaml\", \"serve\"]}.\n" +
			"The client's file keeps everything else, byte for byte; a timestamped copy of it is saved next to it first\n" +
			"(FILE.mcp-hub-YYYYMMDD-HHMMSS.bak). Running it again changes nothing. With --replace, the client's\n" +
			"entries the hub now serves to it are removed: same name and same server (command and args, or URL)\n" +
			"as an enabled server of the hub config, served whole by --toolset when one is given.",
		Flags: append(clientFlags(),
			&cli.StringFlag{Name: "toolset", Usage: "the hub serves only toolset `T` to this client"},
			&cli.BoolFlag{Name: "replace", Usage: "remove the client's entries the hub now serves to it (same name and same server)"},
			&cli.StringFlag{Name: "command", Usage: "the mcp-hub `PATH` the client runs (default: this binary)"},
		),
		Action: runInstall,
	}
}

func uninstallCommand() *cli.Command {
	return &cli.Command{
		Name:        "uninstall",
		Usage:       "remove the hub's entry from a client's config (--restore: put back the file as it was before the last change)",
		ArgsUsage:   "CLIENT",
		Description: "Removes the entry install added, after saving a timestamped copy of the file. With --restore, puts back\nthe newest copy install, uninstall or import saved instead (and saves the file as it is first).",
		Flags: append(clientFlags(),
			&cli.BoolFlag{Name: "restore", Usage: "put the newest backup of the file back"},
		),
		Action: runUninstall,
	}
}

// clientFile resolves the client file to edit and reads it (nil when it
// does not exist yet).
func clientFile(c *cli.Context) (clientconfig.Location, []byte, error) {
	client := c.Args().First()
	if !slices.Contains(clientconfig.Clients, client) || c.Args().Len() != 1 {
		return clientconfig.Location{}, nil, cli.Exit(fmt.Sprintf("%s needs one CLIENT: %s (got %q)", c.Command.Name, strings.Join(clientconfig.Clients, ", "), strings.Join(c.Args().Slice(), " ")), exitConfig)
	}
	if p := c.String("client-config"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return clientconfig.Location{}, nil, err
		}
		data, err := readIfExists(abs)
		if err != nil {
			return clientconfig.Location{}, nil, err
		}
		return clientconfig.FileLocation(client, abs, data), data, nil
	}
	loc, err := clientconfig.InstallLocation(client, c.String("scope"), clientconfig.CurrentEnv())
	if err != nil {
		return clientconfig.Location{}, nil, cli.Exit(err.Error(), exitConfig)
	}
	data, err := readIfExists(loc.Path)
	return loc, data, err
}

func readIfExists(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}

func runInstall(c *cli.Context) error {
	loc, data, err := clientFile(c)
	if err != nil {
		return err
	}
	cfgPath, err := filepath.Abs(configPath(c))
	if err != nil {
		return err
	}
	// The client will start the hub on this config: it must load.
	cfgData, err := os.ReadFile(cfgPath)
	if err != nil {
		return cli.Exit(fmt.Sprintf("install: the hub config %s: %v (make one: mcp-hub import %s --config %s)", cfgPath, err, c.Args().First(), shellQuote(cfgPath)), exitConfig)
	}
	cfg, err := config.Parse(cfgPath, cfgData, builtin.Names())
	if err != nil {
		return err
	}
	args := []string{"--config", cfgPath, "serve"}
	if t := c.String("toolset"); t != "" {
		if _, ok := cfg.Toolsets[t]; !ok {
			return cli.Exit(fmt.Sprintf("install: no toolset %q in %s; toolsets: %s", t, cfgPath, strings.Join(sortedNames(cfg.Toolsets), ", ")), exitConfig)
		}
		args = append(args, "--toolset", t)
	}
	if n := clientconfig.ToolNameLimit(loc.Client, c.String("name")); n > 0 && n < config.MaxNameLength {
		if n < config.MinNameLength {
			return cli.Exit(fmt.Sprintf("install: %s allows %d characters for the entry name and a tool name together; %q leaves %d for tool names, the hub needs %d: choose a shorter --name", loc.Client, n+len(c.String("name")), c.String("name"), n, config.MinNameLength), exitConfig)
		}
		args = append(args, "--max-name-length", strconv.Itoa(n))
	}
	command, err := hubCommand(c.String("command"))
	if err != nil {
		return err
	}
	var remove []string
	if c.Bool("replace") {
		current, err := clientconfig.Parse(loc, orEmpty(data), clientconfig.Env{})
		if err != nil {
			return cli.Exit("install: "+err.Error(), exitConfig)
		}
		for _, s := range current {
			if s.Name != c.String("name") && servedByHub(cfg, c.String("toolset"), s) {
				remove = append(remove, s.Name)
			}
		}
	}
	entry := clientconfig.HubEntry{Name: c.String("name"), Command: command, Args: args}
	res, err := clientconfig.Install(loc, data, entry, remove, command)
	if err != nil {
		return cli.Exit("install: "+err.Error(), exitConfig)
	}
	out := c.App.Writer
	if !res.Changed {
		fmt.Fprintf(out, "%s: %s already runs the hub as %q (%s); nothing changed.\n", loc.Client, loc.Path, entry.Name, strings.Join(append([]string{command}, args...), " "))
		return nil
	}
	backup, err := saveAndWrite(loc.Path, data, res.Data, loc.Scope == clientconfig.ScopeProject)
	if err != nil {
		return err
	}
	verb := "updated"
	if res.Added {
		verb = "added"
	}
	fmt.Fprintf(out, "%s: %s: %s %q: %s\n", loc.Client, loc.Path, verb, entry.Name, strings.Join(append([]string{command}, args...), " "))
	if len(res.Removed) > 0 {
		fmt.Fprintf(out, "  removed (now served by the hub): %s\n", strings.Join(res.Removed, ", "))
	}
	if len(res.Kept) > 0 {
		fmt.Fprintf(out, "  kept: %s\n", strings.Join(res.Kept, ", "))
	}
	if backup != "" {
		fmt.Fprintf(out, "  the file as it was: %s (mcp-hub uninstall %s --restore puts it back)\n", backup, loc.Client)
	}
	fmt.Fprintf(out, "Restart %s (or reload its MCP servers) to use the hub.\n", loc.Client)
	return nil
}

func runUninstall(c *cli.Context) error {
	loc, data, err := clientFile(c)
	if err != nil {
		return err
	}
	out := c.App.Writer
	if c.Bool("restore") {
		backups, err := clientconfig.Backups(loc.Path)
		if err != nil {
			return err
		}
		if len(backups) == 0 {
			return cli.Exit(fmt.Sprintf("uninstall: no backup of %s to restore (install, uninstall and import save FILE.mcp-hub-*.bak next to it)", loc.Path), 1)
		}
		old, err := clientconfig.ReadBackup(loc, backups[0])
		if err != nil {
			return cli.Exit("uninstall: "+err.Error(), 1)
		}
		if string(old) == string(data) {
			fmt.Fprintf(out, "%s: %s is already as in %s; nothing changed.\n", loc.Client, loc.Path, backups[0])
			return nil
		}
		saved, err := saveAndWrite(loc.Path, data, old, false)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: restored %s from %s", loc.Client, loc.Path, backups[0])
		if saved != "" {
			fmt.Fprintf(out, " (the file as it was: %s)", saved)
		}
		fmt.Fprintf(out, ".\nRestart %s to use it.\n", loc.Client)
		return nil
	}
	if data == nil {
		fmt.Fprintf(out, "%s: %s does not exist; nothing to remove.\n", loc.Client, loc.Path)
		return nil
	}
	self, _ := os.Executable()
	result, removed, err := clientconfig.Uninstall(loc, data, c.String("name"), self)
	if err != nil {
		return cli.Exit("uninstall: "+err.Error(), exitConfig)
	}
	if !removed {
		fmt.Fprintf(out, "%s: %s has no entry %q; nothing changed.\n", loc.Client, loc.Path, c.String("name"))
		return nil
	}
	saved, err := saveAndWrite(loc.Path, data, result, false)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: %s: removed %q (the file as it was: %s).\nRestart %s to stop using the hub.\n", loc.Client, loc.Path, c.String("name"), saved, loc.Client)
	return nil
}

// saveAndWrite backs up path (when it exists) and writes data atomically.
// mkdir creates a missing directory (a project's .cursor/, say); a user
// file whose directory is missing means the client is not installed.
func saveAndWrite(path string, old, data []byte, mkdir bool) (backup string, err error) {
	if old != nil {
		if backup, err = clientconfig.Backup(path, time.Now()); err != nil {
			return "", err
		}
	} else if _, err := os.Stat(filepath.Dir(path)); err != nil {
		if !mkdir {
			return "", cli.Exit(fmt.Sprintf("%s does not exist: is the client installed? (or name the file with --client-config)", filepath.Dir(path)), 1)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
	}
	return backup, clientconfig.WriteFile(path, data, 0o644)
}

// hubCommand is the absolute path of the mcp-hub binary the client runs.
func hubCommand(given string) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("install: the path of this binary: %w (pass --command PATH)", err)
	}
	if strings.Contains(exe, "go-build") {
		return "", cli.Exit("install: this binary is a temporary one from `go run`; build or install mcp-hub (go install github.com/mcp-hub/mcp-hub/cmd/mcp-hub@latest), run install from there, or pass --command PATH", exitConfig)
	}
	return exe, nil
}

// servedByHub reports whether the hub, as installed for this client,
// serves the client's server s in its place: the hub config has a server
// of the same name that is the same server (same URL, or same command and
// args), is not disabled, and is served whole by the toolset (if any).
// Anything less (another server under the name, a copy under another
// name, a server the toolset leaves out or cuts down) stays in the client.
func servedByHub(cfg *config.Config, toolset string, s clientconfig.Server) bool {
	h := cfg.Servers[s.Name]
	if h == nil || h.Disabled {
		return false
	}
	switch {
	case h.URL != "" || s.Config.URL != "":
		if h.URL != s.Config.URL {
			return false
		}
	case h.Command == "" || h.Command != s.Config.Command || !slices.Equal(h.Args, s.Config.Args):
		return false
	}
	if toolset == "" {
		return true
	}
	ts := cfg.Toolsets[toolset]
	if ts == nil {
		return false
	}
	sel := ts.Servers[s.Name]
	return sel != nil && sel.All && sel.Include == nil && len(sel.Exclude) == 0
}

func sortedNames[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func orEmpty(b []byte) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}
