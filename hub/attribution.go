package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// What an upstream sends during a call (sampling, elicitation and roots
// requests, logs, progress, resource updates) goes back to the client
// whose call caused it, and to no other: the hub's upstream.Listener
// methods (upstreamNotified, upstreamRequest) ask caller whose it is,
// which the router tells from the calls in flight that callUpstream
// (forward.go) registers (docs/security.md, "Attribution").

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
