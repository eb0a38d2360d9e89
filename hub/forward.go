package hub

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/closest"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// handleTool answers a call to a tool the session lists (route calls it).
func (s *Session) handleTool(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
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

// callUpstream forwards one call. What happens to each part:
//   - name: replaced by the upstream's original name;
//   - arguments: passed as raw bytes, never decoded;
//   - _meta: passed through, except a progress token, which is swapped for a
//     hub-unique one and swapped back on every progress notification;
//   - cancellation: the downstream request's context cancels the upstream
//     call (notifications/cancelled goes upstream);
//   - result: returned as the upstream sent it (isError included), as its
//     very bytes from a stdio upstream (upstream.RawResult);
//   - session: an HTTP upstream runs the call in this session's own
//     upstream session, so what it sends meanwhile is this session's (a
//     legacy session's; a modern Session is shared, see router);
//   - what the upstream sends during the call reaches this call's client
//     only (router), and a 2026-07-28 upstream's input requests, which
//     come back in the call's own context, reach this call exactly;
//   - errors: a JSON-RPC error from the upstream is passed on with its code;
//     a server that is down, restarting or timed out gives an isError
//     result that says so and invites a retry.
func (s *Session) callUpstream(ctx context.Context, t *Tool, in *mcp.CallToolParamsRaw) (mcp.Result, error) {
	h := s.hub
	u, err := h.upstream(t.Server)
	if err != nil {
		return nil, err
	}
	params := &mcp.CallToolParams{Name: t.Original, Arguments: in.Arguments}
	if len(in.Arguments) == 0 {
		params.Arguments = nil
	}
	if in.Meta != nil {
		params.Meta = maps.Clone(in.Meta)
	}
	call := h.routes.begin(ctx, s, t.Server)
	defer h.routes.end(call)
	if token := in.GetProgressToken(); token != nil {
		params.SetProgressToken(h.routes.mapProgress(call, token))
	}
	r := &UpstreamRequest{Method: "tools/call", Server: t.Server, Tool: t, Meta: &params.Meta, Start: time.Now()}
	callCtx := s.upstreamStart(withCall(ctx, call), r)
	res, err := u.CallTool(callCtx, s, params)
	s.upstreamDone(callCtx, r, res, err)
	if err != nil {
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr):
			return nil, rpcErr
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return errorResult(h.redact.String(fmt.Sprintf("Error: %v", err))), nil
	}
	return res, nil
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
