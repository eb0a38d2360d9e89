package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/pin"
)

func toolsCommand() *cli.Command {
	return &cli.Command{
		Name:  "tools",
		Usage: "list every tool the hub exposes",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			g, _, closeHub, err := openHub(c)
			if err != nil {
				return err
			}
			defer closeHub()
			h := g.Hub()
			cat := h.Catalog()
			discovery := h.Config().Discovery.Enabled
			if c.Bool("json") {
				type row struct {
					Name        string `json:"name"`
					Server      string `json:"server"`
					Original    string `json:"original_name"`
					Status      string `json:"status"`
					Description string `json:"description"`
				}
				rows := []row{}
				for _, t := range cat.Tools {
					rows = append(rows, row{t.Name, t.Server, t.Original, status(t), t.Def.Description})
				}
				// Held back by their pins: the state, never the new text.
				for _, q := range cat.Quarantine {
					rows = append(rows, row{q.Name, q.Server, q.Original, string(q.State), ""})
				}
				return printEscapedJSON(c.App.Writer, rows)
			}
			w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			if discovery {
				fmt.Fprintln(w, "TOOL\tSERVER\tSTATUS\tDESCRIPTION")
			} else {
				fmt.Fprintln(w, "TOOL\tSERVER\tDESCRIPTION")
			}
			for _, t := range cat.Tools {
				desc := oneLine(t.Def.Description, 70)
				if discovery {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", t.Name, t.Server, status(t), desc)
				} else {
					fmt.Fprintf(w, "%s\t%s\t%s\n", t.Name, t.Server, desc)
				}
			}
			for _, q := range cat.Quarantine {
				// The state and why, never the new text: `mcp-hub pins diff` shows it escaped.
				held := fmt.Sprintf("(%s: %s; see `mcp-hub pins diff %s`)", q.State, q.Reason, q.Server)
				if discovery {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", q.Name, q.Server, q.State, held)
				} else {
					fmt.Fprintf(w, "%s\t%s\t%s\n", q.Name, q.Server, held)
				}
			}
			w.Flush()
			fmt.Fprintf(c.App.Writer, "\n%d tools from %d servers", len(cat.Tools), len(h.Upstreams()))
			if n := len(cat.Quarantine); n > 0 {
				fmt.Fprintf(c.App.Writer, ", %d held back by their pins (`mcp-hub pins`)", n)
			}
			if discovery {
				eager := 0
				for _, t := range cat.Tools {
					if !t.Deferred {
						eager++
					}
				}
				fmt.Fprintf(c.App.Writer, " (%d eager, %d deferred)", eager, len(cat.Tools)-eager)
			}
			fmt.Fprintln(c.App.Writer)
			line, err := tokensLine(c.Context, h)
			if err != nil {
				return fmt.Errorf("tools: count tokens: %w", err)
			}
			fmt.Fprintln(c.App.Writer, line)
			return nil
		},
	}
}

func status(t *hub.Tool) string {
	if t.Deferred {
		return "deferred"
	}
	return "eager"
}

func oneLine(s string, max int) string {
	// What upstreams wrote goes to a terminal: one line, no control
	// characters, cut at a rune boundary; hidden characters (tag
	// characters, zero-width ones, bidi controls) shown as escapes.
	return clean.Line(pin.Escape(strings.Join(strings.Fields(s), " ")), max)
}

func printJSON(c *cli.Context, v any) error {
	enc := json.NewEncoder(c.App.Writer)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func serversCommand() *cli.Command {
	return &cli.Command{
		Name:  "servers",
		Usage: "show each upstream server's state, protocol version, tools, restarts, connect time, last call latency and last error",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			g, _, closeHub, err := openHub(c)
			if err != nil {
				return err
			}
			defer closeHub()
			health := g.Health()
			if c.Bool("json") {
				return printJSON(c, health)
			}
			w := tabwriter.NewWriter(c.App.Writer, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SERVER\tTRANSPORT\tSTATE\tPROTOCOL\tTOOLS\tRESTARTS\tCONNECT\tLAST CALL\tERROR")
			ms := func(v float64) string {
				if v <= 0 {
					return "-"
				}
				return (time.Duration(v * float64(time.Millisecond))).Round(time.Millisecond).String()
			}
			for _, s := range health.Servers {
				proto := s.ProtocolVersion
				if proto == "" {
					proto = "-"
				}
				transport := s.Transport
				if s.Isolation != "" {
					transport += fmt.Sprintf(" (%s, %d processes)", s.Isolation, s.IsolatedProcesses)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\n", s.Name, transport, s.State, proto, s.Tools, s.Restarts,
					ms(s.ConnectMillis), ms(s.LatencyMillis), oneLine(s.LastError, 80))
			}
			if err := w.Flush(); err != nil {
				return err
			}
			for _, s := range health.Servers {
				if s.Sandbox != "" {
					fmt.Fprintf(c.App.Writer, "%s: sandbox %s\n", s.Name, s.Sandbox)
				}
			}
			cs := health.Config
			fmt.Fprintf(c.App.Writer, "\nconfig %s applied %s (%d reloads)\n", cs.Path, cs.AppliedAt.Format(time.RFC3339), cs.Reloads)
			if cs.LastReloadError != "" {
				fmt.Fprintf(c.App.Writer, "last reload refused %s: %s\n", cs.LastReloadErrorAt.Format(time.RFC3339), cs.LastReloadError)
			}
			return nil
		},
	}
}

// embeddingsWait bounds how long `mcp-hub search` waits for a first
// embedding of the catalog's tools.
const embeddingsWait = 2 * time.Minute

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "print what search_tools would return for QUERY",
		ArgsUsage: "QUERY",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "step", Usage: "one more step of a multi-step task, searched on its own and interleaved with QUERY (search_tools' queries); repeatable"},
			&cli.StringFlag{Name: "server", Usage: "search only this server's tools"},
			&cli.StringFlag{Name: "toolset", Usage: "search as a session of this toolset would"},
			&cli.BoolFlag{Name: "json", Usage: "print the tool result as JSON"},
		},
		Action: func(c *cli.Context) error {
			queries := append([]string{strings.Join(c.Args().Slice(), " ")}, c.StringSlice("step")...)
			if strings.TrimSpace(strings.Join(queries, "")) == "" && c.String("server") == "" {
				return cli.Exit("search needs a QUERY (or --server NAME): mcp-hub search \"create an issue\"", exitConfig)
			}
			g, _, closeHub, err := openHub(c)
			if err != nil {
				return err
			}
			defer closeHub()
			h := g.Hub()
			if !h.Config().Discovery.Enabled {
				return cli.Exit("discovery is off: set 'discovery: {enabled: true}' in "+configPath(c)+" to defer tools behind search_tools", exitConfig)
			}
			// With discovery.embeddings, rank as a running hub would:
			// once the tools have their vectors (from the cache at once,
			// else embedded now, once).
			ctx, cancel := context.WithTimeout(c.Context, embeddingsWait)
			if !h.AwaitEmbeddings(ctx) {
				fmt.Fprintln(c.App.ErrWriter, "mcp-hub: the tools' embeddings are not ready (see the log): this search is lexical")
			}
			cancel()
			res, err := h.Search(c.Context, c.String("toolset"), queries, c.String("server"))
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return printJSON(c, res)
			}
			// The tools' names and descriptions, from upstreams, without
			// control characters (its size is bounded by the search's limit).
			fmt.Fprint(c.App.Writer, clean.Text(hub.ResultText(res), math.MaxInt))
			if res.IsError {
				return cli.Exit("", 1)
			}
			return nil
		},
	}
}

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "work with the config file",
		Subcommands: []*cli.Command{{
			Name:  "check",
			Usage: "load the config, connect every server, and report problems",
			Action: func(c *cli.Context) error {
				g, _, closeHub, err := openHub(c)
				if err != nil {
					return err
				}
				defer closeHub()
				h := g.Hub()
				out := c.App.Writer
				fmt.Fprintf(out, "%s: config OK\n", configPath(c))
				failed := 0
				for _, s := range h.Upstreams() {
					mark := "ok"
					if s.State != "ready" && s.State != "disabled" {
						mark = "FAILED"
						failed++
					}
					fmt.Fprintf(out, "  %-6s %-20s %-10s %3d tools  %s\n", mark, s.Name, s.State, s.Tools, s.LastError)
				}
				for _, w := range h.Config().Warnings {
					fmt.Fprintln(out, "  warning:", w)
				}
				for _, p := range h.Catalog().Problems {
					fmt.Fprintln(out, "  problem:", p)
				}
				if failed > 0 || len(h.Catalog().Problems) > 0 {
					return cli.Exit(fmt.Sprintf("%d server(s) failed, %d problem(s)", failed, len(h.Catalog().Problems)), 1)
				}
				return nil
			},
		}},
	}
}
