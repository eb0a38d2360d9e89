package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/closest"
	"github.com/mcp-hub/mcp-hub/internal/version"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func callCommand() *cli.Command {
	return &cli.Command{
		Name:      "call",
		Usage:     "call one tool through the hub and print its result",
		ArgsUsage: "TOOL [JSON | key=value ...]",
		Description: `Calls TOOL (its exact exposed name, as 'mcp-hub tools' lists it; deferred tools
are loaded and called directly) with the arguments given either as one JSON
object or as key=value pairs. A value that parses as JSON is taken as JSON
(a=5 is the number 5, ok=true a boolean, tags='["x","y"]' an array), anything
else as a string (name=Ada); quote it as JSON to force a string (id='"42"').

Prints the text content of the result (--json: the whole result, with
structuredContent). Exit status: 0 ok, 1 when the tool reports an error
(isError) or the call fails, 2 for a bad tool name (the closest names are
suggested) or bad arguments. Flags may also follow TOOL.`,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print the whole result as JSON"},
			&cli.StringFlag{Name: "elicitation", Value: "decline", Usage: "how to answer a server's elicitation request: accept (with the form's defaults), decline or cancel"},
		},
		Action: runCall,
	}
}

func runCall(c *cli.Context) error {
	args, err := positionalArgs(c)
	if err != nil {
		return cli.Exit(err.Error(), exitConfig)
	}
	asJSON, elicit := c.Bool("json"), c.String("elicitation")
	if !slices.Contains([]string{"accept", "decline", "cancel"}, elicit) {
		return cli.Exit(fmt.Sprintf("--elicitation %q: use accept, decline or cancel", elicit), exitConfig)
	}
	if len(args) == 0 {
		return cli.Exit("usage: mcp-hub call TOOL [JSON | key=value ...]", exitConfig)
	}
	name := args[0]
	arguments, err := parseCallArguments(args[1:])
	if err != nil {
		return cli.Exit(err.Error(), exitConfig)
	}
	g, _, closeHub, err := openHubWith(c, interactive())
	if err != nil {
		return err
	}
	defer closeHub()
	h := g.Hub()
	cat := h.Catalog()
	tool, known := cat.Tool(name)
	discovery := h.Config().Discovery.Enabled
	if q, held := cat.Quarantined(name); held {
		return cli.Exit(q.Message(), 1)
	}
	if !known && !(discovery && (name == hub.SearchToolsName || name == hub.CallToolName)) {
		return unknownToolExit(h, cat, name)
	}

	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-hub-call", Version: version.Version}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if elicit == "accept" && req.Params.Mode != "url" {
				// The SDK fills in the form's defaults.
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
			}
			if elicit == "accept" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: elicit}, nil
		},
	})
	cs, err := h.Connect(c.Context, "", client)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer cs.Close()
	if known && tool.Deferred {
		// Load it into this session, as a client would through search_tools.
		if _, err := cs.CallTool(c.Context, &mcp.CallToolParams{Name: hub.SearchToolsName, Arguments: map[string]any{"tool_names": []string{name}}}); err != nil {
			return cli.Exit(fmt.Sprintf("loading deferred tool '%s': %v", name, err), 1)
		}
	}
	res, err := cs.CallTool(c.Context, &mcp.CallToolParams{Name: name, Arguments: arguments})
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return cli.Exit(clean.Text(fmt.Sprintf("%s: %s", name, rpcErr.Message), maxLogValue), 1)
		}
		return cli.Exit(clean.Text(fmt.Sprintf("%s: %v", name, err), maxLogValue), 1)
	}
	if asJSON {
		if err := printJSON(c, res); err != nil {
			return err
		}
	} else {
		printContent(c.App.Writer, res)
	}
	if res.IsError {
		return cli.Exit("", 1)
	}
	return nil
}

// parseCallArguments reads the arguments of `call`: one JSON object, or
// key=value pairs whose values are JSON when they parse as JSON and
// strings otherwise.
func parseCallArguments(args []string) (map[string]any, error) {
	out := map[string]any{}
	if len(args) == 1 && strings.HasPrefix(strings.TrimSpace(args[0]), "{") {
		if err := json.Unmarshal([]byte(args[0]), &out); err != nil {
			return nil, fmt.Errorf("arguments %q are not a JSON object: %v", args[0], err)
		}
		return out, nil
	}
	for _, a := range args {
		key, value, ok := strings.Cut(a, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("argument %q is not key=value (or pass one JSON object)", a)
		}
		if _, dup := out[key]; dup {
			return nil, fmt.Errorf("argument %q is given twice", key)
		}
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			v = value
		}
		out[key] = v
	}
	return out, nil
}

// unknownToolExit explains a name the catalog does not have: servers that
// have not listed their tools (down, or needing a login) may own it (exit
// 1); otherwise it is a bad name (exit 2), with the closest names.
func unknownToolExit(h *hub.Hub, cat *hub.Catalog, name string) error {
	var down []string
	for _, st := range h.Upstreams() {
		if !st.Ready() && st.State != upstream.StateDisabled && st.Tools == 0 {
			line := fmt.Sprintf("  %s: %s", st.Name, st.State)
			if st.LastError != "" {
				line += ": " + st.LastError
			}
			down = append(down, line)
		}
	}
	msg := fmt.Sprintf("unknown tool '%s'.", name)
	if close := closest.Closest(name, cat.Names(), 3); len(close) > 0 {
		msg += " Did you mean: " + strings.Join(close, ", ") + "?"
	}
	if len(down) > 0 {
		return cli.Exit(msg+" These servers have not listed their tools; it may be one of theirs:\n"+strings.Join(down, "\n"), 1)
	}
	return cli.Exit(msg+" See `mcp-hub tools`.", exitConfig)
}

// printContent writes a result's text content, one block per line, and a
// short note for every other kind of content.
func printContent(w io.Writer, res *mcp.CallToolResult) {
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			fmt.Fprintln(w, c.Text)
		case *mcp.ImageContent:
			fmt.Fprintf(w, "[image %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcp.AudioContent:
			fmt.Fprintf(w, "[audio %s, %d bytes]\n", c.MIMEType, len(c.Data))
		case *mcp.ResourceLink:
			fmt.Fprintf(w, "[resource link %s]\n", c.URI)
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				fmt.Fprintln(w, c.Resource.Text)
			} else if c.Resource != nil {
				fmt.Fprintf(w, "[resource %s]\n", c.Resource.URI)
			}
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			fmt.Fprintln(w, string(data))
		}
	}
}
