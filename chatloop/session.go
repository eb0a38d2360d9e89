package chatloop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// Hub is what a chat needs of mcp-hub; *hub.Hub is one, and tests use an
// in-process MCP server.
type Hub interface {
	// Connect opens an MCP session to the hub for the given toolset ("" =
	// all tools) with the given client.
	Connect(ctx context.Context, toolset string, client *mcp.Client) (*mcp.ClientSession, error)
	// ServerOf names the upstream server of an exposed tool, for stats:
	// only the hub knows, since a server's prefix may be anything, or "".
	ServerOf(tool string) (server string, ok bool)
	// PrincipalOf names who a request's context is from (the hub's
	// principal key), or "": the HTTP API binds its approvals to it.
	PrincipalOf(ctx context.Context) string
}

// Session is the chat's MCP session to the hub plus a cache of its
// tools/list.
type Session struct {
	cs     *mcp.ClientSession
	hub    Hub
	logger *slog.Logger

	// stale is set by notifications/tools/list_changed (from the SDK's
	// goroutine) and after any tool call; the next Tools call re-lists.
	stale atomic.Bool

	mu     sync.Mutex
	tools  []*mcp.Tool
	seen   map[string]bool
	listed bool
}

// Dial builds the chat's MCP client, whose list_changed handler marks the
// tool cache stale, and connects it to the hub.
func Dial(ctx context.Context, hub Hub, toolset string, logger *slog.Logger) (*Session, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Session{hub: hub, logger: logger, seen: map[string]bool{}}
	s.stale.Store(true)
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-hub-chat", Version: "1"}, &mcp.ClientOptions{
		Logger: logger,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			s.stale.Store(true)
		},
	})
	cs, err := hub.Connect(ctx, toolset, client)
	if err != nil {
		if toolset != "" {
			return nil, fmt.Errorf("connect to hub (toolset %q): %w", toolset, err)
		}
		return nil, fmt.Errorf("connect to hub: %w", err)
	}
	s.cs = cs
	return s, nil
}

// ClientSession is the underlying MCP session.
func (s *Session) ClientSession() *mcp.ClientSession { return s.cs }

// Close ends the MCP session.
func (s *Session) Close() error { return s.cs.Close() }

// markStale forces the next Tools call to re-list. The loop calls it after
// every round of tool calls, and the model must see a tool a search loaded
// on its very next call: the hub sends list_changed before the search's
// result, but go-sdk's client may return the result before its handler for
// that earlier notification has run, and a change that was not the call's
// own (an upstream's) is announced only after a debounce.
func (s *Session) markStale() { s.stale.Store(true) }

// Tools returns the session's current tools, re-listing when stale. added
// names the tools that appeared since the previous listing (none on the
// first), which is how the chat counts tools discovered.
func (s *Session) Tools(ctx context.Context) (tools []*mcp.Tool, added []string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Swap before listing: a notification that arrives during the listing
	// marks the cache stale again rather than being lost.
	if !s.stale.Swap(false) && s.listed {
		return s.tools, nil, nil
	}
	var list []*mcp.Tool
	for t, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			s.stale.Store(true)
			return nil, nil, fmt.Errorf("list hub tools: %w", err)
		}
		list = append(list, t)
	}
	for _, t := range list {
		if !s.seen[t.Name] {
			s.seen[t.Name] = true
			if s.listed {
				added = append(added, t.Name)
			}
		}
	}
	s.tools, s.listed = list, true
	return list, added, nil
}

// tool finds a tool of the last listing by name, or nil.
func (s *Session) tool(name string) *mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range s.tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// lastTools is the last successful listing, for a turn that goes on
// after the hub failed.
func (s *Session) lastTools() []*mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tools
}

// Call runs one tool through the hub. ctx cancellation is sent upstream as
// notifications/cancelled by the SDK.
func (s *Session) Call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	return s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// toolDefs converts tools/list entries for a provider. Schemas pass through
// verbatim; a tool whose schema cannot be marshalled is offered with an
// empty object schema rather than failing the whole request.
func toolDefs(tools []*mcp.Tool) []ToolDef {
	defs := make([]ToolDef, 0, len(tools))
	for _, t := range tools {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		desc := t.Description
		if desc == "" {
			desc = t.Title
		}
		defs = append(defs, ToolDef{Name: t.Name, Description: desc, InputSchema: schema})
	}
	return defs
}

// Names of the hub's meta-tools (spec/search_tools.md).
const (
	searchToolName = "search_tools"
	callToolName   = "call_tool"
	// hubServer is where stats file the meta-tools, as the hub does.
	hubServer = "_hub"
)

// serverOf names the upstream server of an exposed tool for stats.
func (s *Session) serverOf(name string) string {
	if name == searchToolName || name == callToolName {
		return hubServer
	}
	if server, ok := s.hub.ServerOf(name); ok {
		return server
	}
	return "unknown"
}

func toolNames(tools []*mcp.Tool) []string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	sort.Strings(names)
	return names
}
