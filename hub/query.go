package hub

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/version"
)

// What the CLI and the dashboard ask of a running hub, through the same
// code paths a client's requests take.

// Search calls search_tools {query, queries, server_name} as a client of
// toolset would, in a throwaway in-process session owned by ctx's
// principal: what `mcp-hub search` prints and the dashboard's search box
// shows. The first query goes in query, further ones (the steps of a task)
// in queries.
func (h *Hub) Search(ctx context.Context, toolset string, queries []string, server string) (*mcp.CallToolResult, error) {
	cs, err := h.Connect(ctx, toolset, mcp.NewClient(&mcp.Implementation{Name: "mcp-hub-search", Version: version.Version}, nil))
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	args := map[string]any{}
	if len(queries) > 0 {
		args["query"] = queries[0]
	}
	if len(queries) > 1 {
		args["queries"] = queries[1:]
	}
	if server != "" {
		args["server_name"] = server
	}
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: SearchToolsName, Arguments: args})
}

// ResultText is a tool result's text contents, each followed by a newline,
// as `mcp-hub search` prints them.
func ResultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// ToolsetOf is the toolset a session of p gets by default ("" for all
// tools), or an error when p may use none.
func (h *Hub) ToolsetOf(p *Principal) (string, error) { return h.ToolsetFor(p, "") }

// ToolsIn lists the catalog's tools that a session of toolset can see.
func (h *Hub) ToolsIn(toolset string) ([]*Tool, error) {
	ts, err := h.Toolset(toolset)
	if err != nil {
		return nil, err
	}
	var out []*Tool
	for _, t := range h.Catalog().Tools {
		if allows(ts, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// ToolsetFor is the toolset a session of p asking for requested ("" = the
// default) gets. A principal restricted by auth.oauth.toolset_claim gets
// the first configured toolset its claim names, and may ask only for those.
func (h *Hub) ToolsetFor(p *Principal, requested string) (string, error) {
	if p == nil || !p.Restricted {
		return requested, nil
	}
	var allowed []string
	for _, ts := range p.Toolsets {
		if _, ok := h.Config().Toolsets[ts]; ok {
			allowed = append(allowed, ts)
		}
	}
	switch {
	case len(allowed) == 0:
		return "", fmt.Errorf("the token's %s claim names no configured toolset (toolsets: %s)", h.Config().Auth.ToolsetClaim(), strings.Join(sortedKeys(h.Config().Toolsets), ", "))
	case requested == "":
		return allowed[0], nil
	case !p.mayUse(requested):
		return "", fmt.Errorf("toolset '%s' is not one the token's %s claim names (%s)", requested, h.Config().Auth.ToolsetClaim(), strings.Join(allowed, ", "))
	}
	return requested, nil
}
