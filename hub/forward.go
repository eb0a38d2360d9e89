package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/index"
	"github.com/mcp-hub/mcp-hub/internal/clean"
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
//     upstream session, so what it sends meanwhile is this session's;
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
	callCtx := s.upstreamStart(ctx, r)
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
const maxShownName = 2 * MaxNameLength

// shownName is name as the hub repeats it: bounded and one line.
func shownName(name string) string { return clean.Line(name, maxShownName) }

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// unknownTool is the JSON-RPC error for a name the catalog does not have,
// with the closest names when any are close.
func (s *Session) unknownTool(c *Catalog, name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: s.unknownToolMessage(c, name)}
}

func (s *Session) unknownToolMessage(c *Catalog, name string) string {
	msg := fmt.Sprintf("Unknown tool '%s'.", shownName(name))
	if close := index.Closest(name, s.visibleNames(c), 3); len(close) > 0 {
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

// router remembers which downstream session is waiting on which upstream,
// so that what an upstream sends during a call (logs, progress, sampling,
// elicitation, roots) reaches the session whose call caused it.
type router struct {
	mu       sync.Mutex
	calls    map[string]map[*call]struct{} // upstream name -> calls in flight
	progress map[string]*call              // hub progress token -> call
	next     atomic.Int64
}

// call is one downstream tool call in flight to an upstream.
type call struct {
	ctx      context.Context // the downstream request's context
	session  *Session
	upstream string
	token    any    // the downstream progress token
	hubToken string // what the upstream sees instead
}

func (r *router) init() {
	r.calls = map[string]map[*call]struct{}{}
	r.progress = map[string]*call{}
}

func (r *router) begin(ctx context.Context, s *Session, server string) *call {
	c := &call{ctx: ctx, session: s, upstream: server}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.calls[server] == nil {
		r.calls[server] = map[*call]struct{}{}
	}
	r.calls[server][c] = struct{}{}
	return c
}

func (r *router) end(c *call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.calls[c.upstream], c)
	if c.hubToken != "" {
		delete(r.progress, c.hubToken)
	}
}

// mapProgress gives the call a hub-unique progress token: two sessions may
// both use token 1 with the same upstream.
func (r *router) mapProgress(c *call, token any) string {
	c.token = token
	c.hubToken = fmt.Sprintf("mcp-hub-%d", r.next.Add(1))
	r.mu.Lock()
	r.progress[c.hubToken] = c
	r.mu.Unlock()
	return c.hubToken
}

func (r *router) progressCall(token any) *call {
	key, ok := token.(string)
	if !ok {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.progress[key]
}

// callerOf finds the call an upstream's request or notification belongs
// to. Nothing in the message says which call caused it, so: the only
// session with calls in flight to that upstream. Several sessions at once
// is ambiguous (nil, false). A modern call that is waiting for its
// client's input (inputrequired.go) sent its upstream's request already:
// it is never the one.
func (r *router) callerOf(server string) (c *call, ambiguous bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for cl := range r.calls[server] {
		if cl.waitingForClient() {
			continue
		}
		if c != nil && c.session != cl.session {
			return nil, true
		}
		c = cl
	}
	return c, false
}

// callFrom finds a call of session s in flight to an upstream, for what
// the upstream sends in s's own session (upstream.Owner): any of them
// puts the message on s's streams, but one waiting for its client's input.
func (r *router) callFrom(server string, s *Session) *call {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.calls[server] {
		if c.session == s && !c.waitingForClient() {
			return c
		}
	}
	return nil
}

// waitingForClient reports whether c is a modern call whose upstream's
// request is with the client.
func (c *call) waitingForClient() bool {
	sp := suspensionOf(c.ctx)
	return sp != nil && sp.asking.Load() > 0
}

// caller finds the session, and the call, that what an upstream sent
// belongs to: the owner of the upstream session it came in, or else
// (callerOf) the only session calling. c is nil outside a call.
func (h *Hub) caller(ctx context.Context, u *upstream.Upstream) (s *Session, c *call, ambiguous bool) {
	if owner, ok := upstream.Owner(ctx).(*Session); ok {
		return owner, h.routes.callFrom(u.Name(), owner), false
	}
	c, ambiguous = h.routes.callerOf(u.Name())
	if c != nil {
		s = c.session
	}
	return s, c, ambiguous
}

// callContext is the context to forward with: the call's values, so the
// message travels on its request's stream, and ctx's cancellation.
func callContext(ctx context.Context, c *call) context.Context {
	if c == nil {
		return ctx
	}
	return withValuesOf(ctx, c.ctx)
}

func (r *router) forgetSession(s *Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, calls := range r.calls {
		for c := range calls {
			if c.session == s {
				delete(calls, c)
			}
		}
	}
}

// withValuesOf returns a context cancelled like cancel but carrying the
// values of values. The SDK picks the HTTP stream a server-to-client message
// travels on from context values: forwarding with the downstream request's
// values puts the message on that request's stream.
func withValuesOf(cancel, values context.Context) context.Context {
	return valuesContext{Context: cancel, values: values}
}

type valuesContext struct {
	context.Context
	values context.Context
}

func (v valuesContext) Value(key any) any { return v.values.Value(key) }

// upstreamNotified forwards log messages, progress and resource updates
// (listener).
func (h *Hub) upstreamNotified(ctx context.Context, u *upstream.Upstream, method string, params mcp.Params) {
	switch method {
	case upstream.NotifyProgress:
		p := params.(*mcp.ProgressNotificationParams)
		c := h.routes.progressCall(p.ProgressToken)
		if c == nil {
			return
		}
		ss := requestSession(c.ctx)
		if ss == nil {
			ss = c.session.serverSession()
		}
		if ss == nil {
			return
		}
		out := *p
		out.ProgressToken = c.token
		out.Message = h.redact.String(out.Message)
		if err := ss.NotifyProgress(withValuesOf(ctx, c.ctx), &out); err != nil {
			h.log.Debug("progress not forwarded", "server", u.Name(), "err", err)
		}
	case upstream.NotifyLog:
		p := params.(*mcp.LoggingMessageParams)
		p.Data = h.redact.Value(p.Data) // a server may log its own credentials
		s, c, ambiguous := h.caller(ctx, u)
		switch {
		case s != nil:
			ss := s.serverSession()
			if c != nil && requestSession(c.ctx) != nil {
				ss = requestSession(c.ctx)
			}
			if ss != nil {
				ss.Log(callContext(ctx, c), p)
			}
		case ambiguous:
			h.log.Info("upstream log (several sessions calling; not forwarded)", "server", u.Name(), "level", p.Level, "data", p.Data)
		default:
			for _, s := range h.sessionList() {
				if ss := s.serverSession(); ss != nil {
					ss.Log(ctx, p)
				}
			}
		}
	case upstream.NotifyResourceUpdated:
		p := params.(*mcp.ResourceUpdatedNotificationParams)
		sessions := h.sessionList()
		if owner, ok := upstream.Owner(ctx).(*Session); ok {
			sessions = []*Session{owner}
		}
		for _, s := range sessions {
			if s.reaches(u.Name()) { // a toolset bounds updates too (passthrough.go)
				s.server.ResourceUpdated(ctx, p)
			}
		}
	}
}

// upstreamRequest forwards sampling, elicitation and roots requests to the
// session whose call caused them (listener).
func (h *Hub) upstreamRequest(ctx context.Context, u *upstream.Upstream, method string, params mcp.Params) (mcp.Result, error) {
	s, c, ambiguous := h.caller(ctx, u)
	reqCtx := callContext(ctx, c)
	switch {
	case s != nil:
	case ambiguous:
		return nil, fmt.Errorf("mcp-hub: cannot route %s from server '%s': several client sessions have calls in flight to it", method, u.Name())
	default:
		// Not during a call (roots/list right after connecting, say): only
		// unambiguous when one session exists.
		if list := h.sessionList(); len(list) == 1 {
			s = list[0]
		} else {
			return nil, fmt.Errorf("mcp-hub: cannot route %s from server '%s': it was not sent during a tool call and %d client sessions are connected", method, u.Name(), len(list))
		}
	}
	if c != nil {
		if sp := suspensionOf(c.ctx); sp != nil {
			// A modern client's call: the request reaches it as an
			// input_required result.
			in, err := inputRequest(method, params)
			if err != nil {
				return nil, err
			}
			return sp.ask(ctx, method, in)
		}
	}
	ss := s.serverSession()
	if ss == nil {
		return nil, fmt.Errorf("mcp-hub: client session is not initialized")
	}
	switch method {
	case upstream.MethodCreateMessage:
		return ss.CreateMessageWithTools(reqCtx, asSamplingParams(params))
	case upstream.MethodElicit:
		return ss.Elicit(reqCtx, params.(*mcp.ElicitParams))
	case upstream.MethodListRoots:
		p, _ := params.(*mcp.ListRootsParams)
		return ss.ListRoots(reqCtx, p)
	}
	return nil, fmt.Errorf("mcp-hub: unsupported request %s", method)
}

// asSamplingParams accepts either sampling params type the SDK may decode.
func asSamplingParams(p mcp.Params) *mcp.CreateMessageWithToolsParams {
	switch v := p.(type) {
	case *mcp.CreateMessageWithToolsParams:
		return v
	default:
		var out mcp.CreateMessageWithToolsParams
		if b, err := json.Marshal(v); err == nil {
			json.Unmarshal(b, &out)
		}
		return &out
	}
}
