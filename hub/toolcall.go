package hub

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/closest"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Which tool a tools/call names, decided once per call, in each era's
// terms: route (route.go) hands a legacy call to callLegacy and runs a
// modern one's callModern under runModern (inputrequired.go). A call goes
// on to exactly one of the meta-tools (metatools.go: search_tools,
// call_tool) or an upstream's tool (forward.go's callUpstream); a name
// the session may not call is answered here, with the errors below.

// callLegacy answers a legacy client's tools/call: a tool the session
// lists (callListed), or one it does not (callHidden).
func (s *Session) callLegacy(ctx context.Context, r *mcp.CallToolRequest) (mcp.Result, error) {
	shown := s.shows(r.Params.Name)
	if !shown || isMetaTool(r.Params.Name) {
		// It may load tools: then its result waits for the
		// client's re-list (toolsNotice).
		ctx = s.notice.forCall(ctx)
		defer s.notice.awaitRelist(ctx)
	}
	if !shown {
		return s.callHidden(ctx, r)
	}
	return s.callListed(ctx, r)
}

// callModern answers a modern client's tools/call (route runs it under
// runModern, inputrequired.go): a listed tool or a meta-tool as for any
// client; a deferred tool by its exposed name only with
// discovery.auto_load_on_call, and then without loading it.
func (s *Session) callModern(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	name := req.Params.Name
	if s.shows(name) || (isMetaTool(name) && s.hub.Config().Discovery.Enabled) {
		return s.callListed(ctx, req)
	}
	c := s.hub.Catalog()
	t, ok := c.Tool(name)
	if !ok || !s.visible(t) {
		s.traceRefused(ctx)
		if err := s.hub.unlistedServerError(name); err != nil {
			return errorResult("Error: " + err.Error()), nil
		}
		return nil, s.unknownTool(c, name)
	}
	if t.Deferred && !s.hub.Config().Discovery.AutoLoadOnCall {
		s.traceRefused(ctx)
		return errorResult(fmt.Sprintf("Error: Tool '%s' is not in your tool list: call it through call_tool {\"name\": \"%s\", \"arguments\": {...}}.", t.Name, t.Name)), nil
	}
	return s.callUpstream(ctx, t, req.Params)
}

// callListed answers a call to a tool the session lists: a meta-tool
// (metatools.go) or an upstream's tool (forward.go).
func (s *Session) callListed(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	if s.hub.Config().Discovery.Enabled {
		switch req.Params.Name {
		case SearchToolsName:
			s.traceMetaCall(ctx, SearchToolsName)
			return s.searchTools(ctx, req), nil
		case CallToolName:
			s.traceMetaCall(ctx, CallToolName)
			return s.callTool(ctx, req)
		}
	}
	c := s.hub.Catalog()
	t, ok := c.Tool(req.Params.Name)
	if !ok {
		return nil, s.unknownTool(c, req.Params.Name)
	}
	return s.callUpstream(ctx, t, req.Params)
}

// callHidden answers a tools/call for a name the session does not list:
// a deferred tool (not loaded yet: an error, or loaded and run with
// auto_load_on_call), or an unknown one (an error with the closest names).
func (s *Session) callHidden(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	c := s.hub.Catalog()
	t, ok := c.Tool(req.Params.Name)
	if !ok || !s.visible(t) {
		s.traceRefused(ctx)
		if err := s.hub.unlistedServerError(req.Params.Name); err != nil {
			return errorResult("Error: " + err.Error()), nil
		}
		return nil, s.unknownTool(c, req.Params.Name)
	}
	if t.Deferred && !s.isLoaded(t.Name) {
		if !s.hub.Config().Discovery.AutoLoadOnCall {
			s.traceRefused(ctx)
			return notLoaded(t.Name), nil
		}
		s.load(ctx, req.Session, c, []*Tool{t})
	}
	return s.callUpstream(ctx, t, req.Params)
}

func notLoaded(name string) *mcp.CallToolResult {
	return errorResult(fmt.Sprintf("Error: Tool '%s' is not yet loaded. Use the 'search_tools' tool to discover and load it first, then call it again.", name))
}

// maxShownName bounds a name from a client that the hub repeats in an
// error, a log line, a span or the audit file. It is longer than any
// exposed name (MaxNameLength), so a real name shows whole; a longer one
// cannot be a tool, and cannot grow those lines.
const maxShownName = 2 * config.MaxNameLength

// ShownName is a name from a client as mcp-hub repeats it in an error, a
// log line, a span or the audit file: one line, at most twice the longest
// exposed name, so a real name shows whole.
func ShownName(name string) string { return clean.Line(name, maxShownName) }

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// unknownTool is the JSON-RPC error for a name the catalog does not have,
// with the closest names when any are close.
func (s *Session) unknownTool(c *Catalog, name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: s.unknownToolMessage(c, name)}
}

func (s *Session) unknownToolMessage(c *Catalog, name string) string {
	if q, ok := c.Quarantined(name); ok && s.visible(&Tool{Name: q.Name, Server: q.Server, Original: q.Original}) {
		return q.Message() // held back by its pin (pins.go), not unknown
	}
	msg := fmt.Sprintf("Unknown tool '%s'.", ShownName(name))
	if close := closest.Closest(name, s.visibleNames(c), 3); len(close) > 0 {
		msg += " Did you mean: " + strings.Join(close, ", ") + "?"
	}
	for _, u := range s.hub.unlisted(func(prefix string) bool { return prefix == "" }) {
		msg += fmt.Sprintf(" Server '%s' has no prefix and has not listed its tools yet (%s); the tool may be one of its: retry in a moment.", u.Name(), u.Status().State)
	}
	return msg
}

// unlisted returns the servers whose prefix passes match and that are down
// without ever having listed their tools (they failed to start, or are
// still starting).
func (h *Hub) unlisted(match func(prefix string) bool) []*upstream.Upstream {
	var out []*upstream.Upstream
	l := h.live.Load()
	for _, u := range l.upstreams {
		if !match(serverPrefix(u.Name(), l.cfg.Servers[u.Name()])) {
			continue
		}
		if _, err := u.Session(); err != nil && len(u.Lists().Tools) == 0 {
			out = append(out, u)
		}
	}
	return out
}

// unlistedServerError is the retryable error for a call to name when name
// carries the prefix of a server that is down and has never listed its
// tools (it failed to start, or is still starting): its tools are not
// known, but "unknown tool" would send the client the wrong way.
func (h *Hub) unlistedServerError(name string) error {
	down := h.unlisted(func(prefix string) bool {
		return prefix != "" && strings.HasPrefix(name, sanitizeName(prefix)+prefixSeparator)
	})
	if len(down) == 0 {
		return nil
	}
	_, err := down[0].Session()
	return err
}

func (s *Session) visibleNames(c *Catalog) []string {
	var out []string
	for _, t := range c.Tools {
		if s.visible(t) {
			out = append(out, t.Name)
		}
	}
	return out
}
