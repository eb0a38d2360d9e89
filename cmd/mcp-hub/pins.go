package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/gateway/redisstore"
	"github.com/mcp-hub/mcp-hub/pin"
)

// pinsCommand is `mcp-hub pins`: the pinned tool definitions (package
// pin), what waits for approval, and the commands that approve or forget.
// It works on the pins alone (the state folder's file, or the session
// store's with session_store), with no hub started; a running hub applies
// a change within its poll (hub.PinPollInterval).
func pinsCommand() *cli.Command {
	return &cli.Command{
		Name:  "pins",
		Usage: "list pinned tool definitions and those held back for review (diff, approve, forget)",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			store, closeStore, err := openPins(c)
			if err != nil {
				return err
			}
			defer closeStore()
			entries, err := store.List(c.Context)
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			if c.Bool("json") {
				if entries == nil {
					entries = []pin.Entry{}
				}
				return printEscapedJSON(c.App.Writer, entries)
			}
			if len(entries) == 0 {
				fmt.Fprintf(c.App.Writer, "No pins yet (%s): a hub pins each tool the first time it sees it.\n", store.Path())
				return nil
			}
			w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SERVER\tTOOL\tSTATE\tREASON")
			held := 0
			for _, e := range entries {
				if e.State != pin.Pinned {
					held++
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", pin.Escape(e.Server), shownPinTool(e.Tool), e.State, pin.Escape(e.Reason))
			}
			w.Flush()
			fmt.Fprintf(c.App.Writer, "\nPins kept in %s.\n", store.Path())
			if held > 0 {
				fmt.Fprintf(c.App.Writer, "%d held back: review with `mcp-hub pins diff SERVER [TOOL]`, approve with `mcp-hub pins approve SERVER [TOOL...]`.\n", held)
			}
			return nil
		},
		Subcommands: []*cli.Command{{
			Name:      "diff",
			Usage:     "show what changed in the definitions held back: the pinned one and the new one",
			ArgsUsage: "SERVER [TOOL...]",
			Action: func(c *cli.Context) error {
				store, closeStore, server, tools, err := pinsArgs(c, "diff")
				if err != nil {
					return err
				}
				defer closeStore()
				entries, err := store.Diff(c.Context, server, tools...)
				if err != nil {
					return cli.Exit(err.Error(), 1)
				}
				if len(entries) == 0 {
					fmt.Fprintf(c.App.Writer, "Nothing of '%s' waits for approval.\n", pin.Escape(server))
					return nil
				}
				for i, e := range entries {
					if i > 0 {
						fmt.Fprintln(c.App.Writer)
					}
					printPinDiff(c.App.Writer, e)
				}
				return nil
			},
		}, {
			Name:      "approve",
			Usage:     "accept the current definitions of a server's held-back tools (all of them, or those named)",
			ArgsUsage: "SERVER [TOOL...]",
			Flags:     []cli.Flag{&cli.StringFlag{Name: "digest", Usage: "approve one TOOL only if its waiting definition has this digest (the one `pins diff` showed)"}},
			Action: func(c *cli.Context) error {
				store, closeStore, server, tools, err := pinsArgs(c, "approve")
				if err != nil {
					return err
				}
				defer closeStore()
				if digest := c.String("digest"); digest != "" {
					if len(tools) != 1 {
						return cli.Exit("usage: mcp-hub pins approve SERVER TOOL --digest DIGEST (one tool)", exitConfig)
					}
					if err := store.ApproveDigest(c.Context, server, tools[0], digest); err != nil {
						return cli.Exit(err.Error(), 1)
					}
					fmt.Fprintf(c.App.Writer, "Approved '%s': %s (%s). A running hub serves it within a few seconds.\n", pin.Escape(server), pin.Escape(tools[0]), pin.Escape(digest))
					return nil
				}
				approved, err := store.Approve(c.Context, server, tools...)
				if err != nil {
					return cli.Exit(err.Error(), 1)
				}
				if len(approved) == 0 {
					fmt.Fprintf(c.App.Writer, "Nothing of '%s' waits for approval.\n", pin.Escape(server))
					return nil
				}
				for i, a := range approved {
					approved[i] = pin.Escape(a)
				}
				fmt.Fprintf(c.App.Writer, "Approved '%s': %s. A running hub serves them within a few seconds.\n", pin.Escape(server), strings.Join(approved, ", "))
				return nil
			},
		}, {
			Name:      "forget",
			Usage:     "remove every pin of a server: its tools are seen afresh (first_use applies)",
			ArgsUsage: "SERVER",
			Action: func(c *cli.Context) error {
				store, closeStore, server, tools, err := pinsArgs(c, "forget")
				if err != nil {
					return err
				}
				defer closeStore()
				if len(tools) > 0 {
					return cli.Exit("usage: mcp-hub pins forget SERVER", exitConfig)
				}
				found, err := store.Forget(c.Context, server)
				if err != nil {
					return cli.Exit(err.Error(), 1)
				}
				if found {
					fmt.Fprintf(c.App.Writer, "Forgot the pins of '%s'.\n", pin.Escape(server))
				} else {
					fmt.Fprintf(c.App.Writer, "No pins for '%s'.\n", pin.Escape(server))
				}
				return nil
			},
		}},
	}
}

// openPins is the pin store the hub of the config uses: the session
// store's when the config sets session_store (replicas share their pins
// there), else the state folder's file. closeStore releases it.
func openPins(c *cli.Context) (store *pin.Store, closeStore func(), err error) {
	closeStore = func() {}
	if path := configPath(c); fileExists(path) {
		cfg, err := config.Load(path, builtin.Names())
		if err != nil {
			return nil, nil, cli.Exit(err.Error(), exitConfig)
		}
		if cfg.SessionStore != "" && cfg.Pinning.Enabled() {
			ss, err := redisstore.Open(cfg.SessionStore)
			if err != nil {
				return nil, nil, cli.Exit(err.Error(), exitConfig)
			}
			ps, ok := ss.(gateway.PinSharer)
			if !ok {
				ss.Close()
				return nil, nil, cli.Exit("session_store: this store keeps no pins", 1)
			}
			return pin.NewStore(ps.PinBackend()), func() { ss.Close() }, nil
		}
	}
	store, err = openPinFile()
	return store, closeStore, err
}

func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// openPinFile is the pin store of the state folder.
func openPinFile() (*pin.Store, error) {
	dir, err := pin.DefaultDir()
	if err != nil {
		return nil, cli.Exit(err.Error(), 1)
	}
	store, err := pin.Open(dir)
	if err != nil {
		return nil, cli.Exit(err.Error(), 1)
	}
	return store, nil
}

// pinsArgs opens the pin store (the caller runs closeStore when done)
// and splits SERVER [TOOL...].
func pinsArgs(c *cli.Context, cmd string) (store *pin.Store, closeStore func(), server string, tools []string, err error) {
	args, err := positionalArgs(c)
	if err != nil {
		return nil, nil, "", nil, cli.Exit(err.Error(), exitConfig)
	}
	if len(args) == 0 {
		return nil, nil, "", nil, cli.Exit(fmt.Sprintf("usage: mcp-hub pins %s SERVER [TOOL...]", cmd), exitConfig)
	}
	store, closeStore, err = openPins(c)
	if err != nil {
		return nil, nil, "", nil, err
	}
	return store, closeStore, args[0], args[1:], nil
}

// shownPinTool names a pin's tool for a terminal; "" is the server's
// instructions.
func shownPinTool(tool string) string {
	if tool == "" {
		return "(instructions)"
	}
	return pin.Escape(tool)
}

// printPinDiff writes one entry's old and new text, line by line: "-"
// only in the pinned text, "+" only in the new one. Hidden characters are
// escaped.
func printPinDiff(w io.Writer, e pin.Entry) {
	fmt.Fprintf(w, "server '%s', tool %s: %s: %s\n", pin.Escape(e.Server), shownPinTool(e.Tool), e.State, pin.Escape(e.Reason))
	if e.Old == "" {
		fmt.Fprintln(w, "--- pinned: (nothing: first seen)")
	} else {
		fmt.Fprintln(w, "--- pinned")
	}
	fmt.Fprintln(w, "+++ now")
	for _, l := range lineDiff(strings.Split(pin.Pretty(e.Old), "\n"), strings.Split(pin.Pretty(e.New), "\n")) {
		fmt.Fprintln(w, l)
	}
	if e.Tool != "" {
		// Approving by digest approves this text, even if the server
		// changes it again before the command runs.
		fmt.Fprintf(w, "To approve exactly this: mcp-hub pins approve %s %s --digest %s\n", pin.Escape(e.Server), pin.Escape(e.Tool), e.Digest)
	}
}

// maxDiffLines bounds the table lineDiff builds (lines of old times lines
// of new); past it, the two texts are shown whole, one after the other.
const maxDiffLines = 4 << 20

// lineDiff is a longest-common-subsequence diff of two texts' lines.
func lineDiff(a, b []string) []string {
	if len(a) == 1 && a[0] == "" {
		a = nil
	}
	if len(a)*len(b) > maxDiffLines {
		var out []string
		for _, l := range a {
			out = append(out, "-"+l)
		}
		for _, l := range b {
			out = append(out, "+"+l)
		}
		return out
	}
	// lcs[i][j]: the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, " "+a[i])
			i++
			j++
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "-"+a[i])
			i++
		default:
			out = append(out, "+"+b[j])
			j++
		}
	}
	return out
}

// printEscapedJSON prints v as indented JSON with hidden characters as
// escapes (pin.EscapeJSON).
func printEscapedJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", pin.EscapeJSON(b))
	return err
}
