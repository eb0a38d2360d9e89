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

// router remembers which client is waiting on which upstream, so that
// what an upstream sends during a call (logs, progress, sampling,
// elicitation, roots) reaches the client whose call caused it, and no
// other (docs/security.md, "Attribution").
//
// The links that are exact come first: a progress token the hub gave the
// call (mapProgress); a 2026-07-28 upstream's input requests, which come
// back inside the call's own result and so in its context (callIn); an
// upstream session owned by one client session (upstream.Owner). Without
// one (a stdio process shared by every client, speaking 2025-11-25), the
// message says nothing of which call caused it, and the router attributes
// it only when every call in flight to that upstream is one client's
// (callerOf). A call waiting for its client's input_required answer is in
// flight: its upstream may go on sending (a round's requests in parallel,
// logs, progress).
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
	// client is who may receive what the call's upstream sends: a
	// legacy session as a whole (one client holds it), or for a modern
	// request the call alone (each stands alone; a shared modern Session
	// serves many clients of one principal, and a stdio one many calls).
	client   any
	token    any    // the downstream progress token
	hubToken string // what the upstream sees instead
}

func (r *router) init() {
	r.calls = map[string]map[*call]struct{}{}
	r.progress = map[string]*call{}
}

func (r *router) begin(ctx context.Context, s *Session, server string) *call {
	c := &call{ctx: ctx, session: s, upstream: server}
	c.client = s
	if suspensionOf(ctx) != nil || !s.oneClient() {
		c.client = c
	}
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
// to when nothing in the message says: the calls in flight to that
// upstream, all of one client (see call.client), waiting for input or
// not. Calls of several clients at once is ambiguous (nil, true): a guess
// could hand one client's request, or log line, to another.
func (r *router) callerOf(server string) (c *call, ambiguous bool) {
	return r.callFrom(server, nil)
}

// callFrom is callerOf among the calls of s only (of any session: nil),
// for what an upstream sends in s's own upstream session
// (upstream.Owner).
func (r *router) callFrom(server string, s *Session) (c *call, ambiguous bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for cl := range r.calls[server] {
		if s != nil && cl.session != s {
			continue
		}
		if c != nil && c.client != cl.client {
			return nil, true
		}
		c = cl
	}
	return c, false
}

// callKey carries the call in the context the hub calls its upstream
// with: what comes back in that context (a 2026-07-28 upstream's input
// requests, answered inside the call) is the call's, exactly.
type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callIn(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// caller finds the session, and the call, that what an upstream sent
// belongs to (see router). s is nil when nothing can be attributed;
// ambiguous says that calls of several clients were in flight. c is nil
// outside a call: then s is set only for an exact link to a session of one
// client (its own upstream session), or to a modern request whose
// suspension the context carries (a 2026-07-28 upstream's input request
// during prompts/get or resources/read). What a principal's isolated
// process sends is attributed among that principal's calls alone
// (isolation.go).
func (h *Hub) caller(ctx context.Context, u *upstream.Upstream) (s *Session, c *call, ambiguous bool) {
	if c := callIn(ctx); c != nil && c.upstream == u.Name() {
		return c.session, c, false
	}
	if sp := suspensionOf(ctx); sp != nil {
		return sp.session, nil, false
	}
	if p, ok := upstream.Owner(ctx).(upstream.PrincipalOwner); ok {
		return h.principalCaller(u.Name(), p)
	}
	owner, _ := upstream.Owner(ctx).(*Session)
	c, ambiguous = h.routes.callFrom(u.Name(), owner)
	switch {
	case c != nil:
		s = c.session
	case owner != nil && !ambiguous && owner.oneClient():
		s = owner // its own upstream session, between its calls
	}
	return s, c, ambiguous
}

// oneClient reports whether s is one client's: a session of the legacy
// era, which its client holds and which can be sent requests and
// notifications of its own. A modern client's requests each stand alone
// (and over HTTP a shared modern Session serves many clients).
func (s *Session) oneClient() bool {
	if s.modernShared {
		return false
	}
	return !modernSession(s.serverSession())
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
		if s == nil {
			// Never broadcast: a line nobody's call can be shown to have
			// caused may be about any client's work.
			why := "sent outside any call"
			if ambiguous {
				why = "several clients have calls in flight to it"
			}
			h.log.Debug("upstream log not forwarded: "+why, "server", u.Name(), "level", p.Level, "data", p.Data)
			return
		}
		ss := s.serverSession()
		if c != nil && requestSession(c.ctx) != nil {
			ss = requestSession(c.ctx)
		}
		if ss != nil {
			ss.Log(callContext(ctx, c), p)
		}
	case upstream.NotifyResourceUpdated:
		p := params.(*mcp.ResourceUpdatedNotificationParams)
		sessions := h.sessionList()
		switch owner := upstream.Owner(ctx).(type) {
		case *Session:
			sessions = []*Session{owner}
		case upstream.PrincipalOwner:
			sessions = h.sessionsOf(owner)
		}
		for _, s := range sessions {
			if s.reaches(u.Name()) { // a toolset bounds updates too (passthrough.go)
				s.server.ResourceUpdated(ctx, p)
			}
		}
	}
}

// upstreamRequest forwards sampling, elicitation and roots requests to the
// client whose call caused them (listener), and refuses what cannot be
// attributed (see router).
func (h *Hub) upstreamRequest(ctx context.Context, u *upstream.Upstream, method string, params mcp.Params) (mcp.Result, error) {
	s, c, ambiguous := h.caller(ctx, u)
	reqCtx := callContext(ctx, c)
	switch {
	case s != nil:
	case ambiguous:
		return nil, fmt.Errorf("mcp-hub: cannot route %s from server '%s': several clients have calls in flight to it, and nothing in the request says whose call sent it", method, u.Name())
	default:
		// Not during a call (roots/list right after connecting, say): only
		// unambiguous when one session exists, and it is one client's.
		list := h.sessionList()
		if len(list) != 1 || !list[0].oneClient() {
			return nil, fmt.Errorf("mcp-hub: cannot route %s from server '%s': it was not sent during a tool call and %d client sessions are connected", method, u.Name(), len(list))
		}
		s = list[0]
	}
	if sp := suspensionOf(reqCtx); sp != nil {
		// A modern client's call: the request reaches it as an
		// input_required result.
		in, err := inputRequest(method, params)
		if err != nil {
			return nil, err
		}
		return sp.ask(ctx, method, in)
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
