package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// Global flags work before or after a command's name, on every command:
// `mcp-hub --config x serve`, `mcp-hub serve --config x`, `mcp-hub config
// check -c x`. urfave/cli v2 does not pass flags down to subcommands, so
// newApp gives every command in the tree its own copy (addGlobalFlags) and
// globalString reads the copy closest to the command that was given. Only
// the root copy reads MCP_HUB_CONFIG, so a flag anywhere beats the variable.

// globalFlags are the flags every command takes. root is the app's own set.
func globalFlags(root bool) []cli.Flag {
	var env []string
	if root {
		env = []string{"MCP_HUB_CONFIG"}
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Aliases: []string{"c"}, EnvVars: env,
			Usage: "config `FILE` (hub.yaml, or a Claude Desktop JSON file); default ./hub.yaml, then <user config dir>/mcp-hub/hub.yaml; also MCP_HUB_CONFIG"},
		&cli.StringFlag{Name: "log-level", Value: "info", Usage: "`LEVEL`: debug, info, warn or error"},
	}
}

// addGlobalFlags gives every command below cmds, at any depth, the global
// flags, so a command added later gets them without saying so. A command
// that defines a flag of the same name (or alias) keeps its own: urfave/cli
// would panic on the second definition, and TestGlobalFlagsAnywhere fails
// for that command instead.
func addGlobalFlags(cmds []*cli.Command) {
	for _, cmd := range cmds {
		for _, g := range globalFlags(false) {
			if !slices.ContainsFunc(g.Names(), func(n string) bool { return hasFlag(cmd.Flags, n) }) {
				cmd.Flags = append(cmd.Flags, g)
			}
		}
		addGlobalFlags(cmd.Subcommands)
	}
}

func hasFlag(flags []cli.Flag, name string) bool {
	for _, f := range flags {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// globalString is a global flag's value: from the innermost command where
// it was given, else its default (or, for --config, MCP_HUB_CONFIG, which
// only the root copy reads).
func globalString(c *cli.Context, name string) string {
	lineage := c.Lineage()
	for _, ctx := range lineage {
		if ctx.IsSet(name) {
			return ctx.String(name)
		}
	}
	for _, ctx := range lineage {
		if v := ctx.String(name); v != "" {
			return v
		}
	}
	return ""
}

// globalSet reports whether a global flag was given anywhere (or, for
// --config, set by MCP_HUB_CONFIG).
func globalSet(c *cli.Context, name string) bool {
	for _, ctx := range c.Lineage() {
		if ctx.IsSet(name) {
			return true
		}
	}
	return false
}

// hoistFlags moves the flags that follow a command's arguments in front of
// them, level by level, so `mcp-hub install claude-desktop --client-config
// F` and `mcp-hub search "open issues" --config x` parse as typed: Go's flag
// package, under urfave/cli, stops at the first argument that is not a flag.
// It knows which flags take a value from the command tree; an unknown flag
// is moved alone, and urfave/cli then reports it. Everything after "--"
// stays an argument ("--" goes in front of all the arguments), and a
// trailing --generate-bash-completion (shell completion) stays last.
func hoistFlags(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	rest := args[1:]
	var tail []string
	if n := len(rest); n > 0 && rest[n-1] == "--generate-bash-completion" {
		rest, tail = rest[:n-1], rest[n-1:]
	}
	out := []string{args[0]}
	flags, cmds := app.Flags, app.Commands
	for {
		var lead, positional []string
		var next *cli.Command
		dashes := false
		for i := 0; i < len(rest); i++ {
			arg := rest[i]
			switch {
			case arg == "--":
				positional = append(positional, rest[i+1:]...)
				dashes = true
				i = len(rest)
			case len(arg) > 1 && arg[0] == '-':
				lead = append(lead, arg)
				if !strings.Contains(arg, "=") && takesValue(flags, arg) && i+1 < len(rest) {
					i++
					lead = append(lead, rest[i])
				}
			case len(positional) == 0 && findCommand(cmds, arg) != nil:
				next = findCommand(cmds, arg)
				rest = rest[i+1:]
				i = len(rest)
			default:
				positional = append(positional, arg)
			}
		}
		out = append(out, lead...)
		if next == nil {
			if dashes {
				out = append(out, "--")
			}
			out = append(out, positional...)
			return append(out, tail...)
		}
		out = append(out, next.Name)
		flags, cmds = next.Flags, next.Subcommands
	}
}

// takesValue reports whether arg (-x or --name) names a flag that reads
// the next argument as its value.
func takesValue(flags []cli.Flag, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == name {
				v, ok := f.(cli.DocGenerationFlag)
				return ok && v.TakesValue()
			}
		}
	}
	return false
}

func findCommand(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
