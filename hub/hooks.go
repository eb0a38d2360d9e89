package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// The seams a layer on top of the hub (package gateway: audit, metrics,
// tracing, the session store) uses, so that the core knows nothing of it.
// Hooks follow the life of sessions and catalogs; a CallTrace, carried in
// a request's context, follows what the hub does for one client request.

// Hooks are called when sessions and the catalog change. Every field is
// optional. They run synchronously on the goroutine of the event: they
// must be quick, and must not wait on the session they are called for.
type Hooks struct {
	// Observe, if set, is called for every session NewSession makes,
	// before it serves a request, and makes the layer that observes its
	// requests: at its declared place in the session's receiving chain
	// (Session.receiving), outside the hub's own layers, so it sees every
	// request of the session, one whose handler panicked too (as the
	// error the hub's panic guard made of it).
	Observe func(s *Session) mcp.Middleware
	// SessionStarted is called once the client has finished the handshake
	// (notifications/initialized): from then on the session gets
	// notifications.
	SessionStarted func(s *Session)
	// SessionEnded is called when a started session ends.
	SessionEnded func(s *Session)
	// ToolsLoaded is called when s has loaded deferred tools (their
	// exposed names), before the call that loaded them answers.
	ToolsLoaded func(s *Session, added []string)
	// CatalogSwapped is called when c has replaced the catalog in service,
	// before sessions move to it.
	CatalogSwapped func(c *Catalog)
}

// CallTrace is a set of hooks that run while the hub handles one client
// request, in the manner of net/http/httptrace: WithCallTrace puts one in
// the request's context (typically in the layer Hooks.Observe made), and
// the hub calls each hook that is set, on the request's goroutine. Every
// field is optional.
//
// A session's own statistics (Session.Stats) are one more subscriber.
type CallTrace struct {
	// MetaToolCall is called when the client calls a meta-tool
	// (SearchToolsName or CallToolName) by name.
	MetaToolCall func(ctx context.Context, name string)
	// SearchDone is called when search_tools has run a search (its
	// arguments were valid); loaded counts the tools it newly loaded into
	// the session.
	SearchDone func(ctx context.Context, loaded int)
	// Refused is called when the hub answers a tools/call with an error of
	// its own: bad arguments, an unknown or not yet loaded tool, a panic.
	Refused func(ctx context.Context)
	// UpstreamStart is called before the hub sends a request to an
	// upstream for the client: a tools/call, resources/read or
	// prompts/get. It returns the context to send it with (a span's, say);
	// it may add to *r.Meta, which the upstream gets as the request's
	// _meta (trace context, for one).
	UpstreamStart func(ctx context.Context, r *UpstreamRequest) context.Context
	// UpstreamDone is called when the upstream has answered (res), or the
	// request failed (err), with the context UpstreamStart returned.
	UpstreamDone func(ctx context.Context, r *UpstreamRequest, res mcp.Result, err error)
	// InputRequired is called when the hub answers a 2026-07-28 request
	// input_required (inputrequired.go): the call is not over, and its
	// upstream is still at work; the client's retry continues it
	// (Continued). A layer that records calls records one when a request
	// of it is answered otherwise.
	InputRequired func(ctx context.Context)
	// Continued is called when a client's retry (ctx) continues a call
	// that an earlier request began: first is that request's context,
	// with whose CallTraces the call's UpstreamStart and UpstreamDone
	// hooks run, whichever request is waiting for it.
	Continued func(ctx, first context.Context)
}

// UpstreamRequest is one request the hub sends to an upstream for a
// client (see CallTrace).
type UpstreamRequest struct {
	Method string // tools/call, resources/read or prompts/get
	Server string // the upstream's name
	// Tool is the catalog tool called; nil for other methods.
	Tool *Tool
	// Meta is the request's _meta as it goes upstream (*Meta may be nil;
	// a hook that adds to it makes it).
	Meta  *mcp.Meta
	Start time.Time
}

// IsToolError reports whether a tools/call result has isError set: the
// result an UpstreamDone hook gets, or a meta-tool's. A stdio upstream's
// result is its own bytes (upstream.RawResult), which are looked at only
// when they mention isError: classifying a call must not cost the decode
// that forwarding it skips.
func IsToolError(res mcp.Result) bool {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.IsError
	case *upstream.RawResult:
		if !bytes.Contains(r.JSON, []byte(`"isError"`)) {
			return false
		}
		var top struct {
			IsError bool `json:"isError"`
		}
		return json.Unmarshal(r.JSON, &top) == nil && top.IsError
	}
	return false
}

// traceList is the CallTraces a context carries, innermost first.
type traceList struct {
	t    *CallTrace
	next *traceList
}

type traceKey struct{}

// WithCallTrace returns ctx carrying t on top of the traces it already
// carries: the hub calls the hooks of every one of them.
func WithCallTrace(ctx context.Context, t *CallTrace) context.Context {
	prev, _ := ctx.Value(traceKey{}).(*traceList)
	return context.WithValue(ctx, traceKey{}, &traceList{t: t, next: prev})
}

// TraceContext is a context carrying one more CallTrace, as WithCallTrace
// returns, for embedding in a context of the caller's own: Init it in
// place, and a request's contexts take one allocation instead of one
// each. A type embedding it and overriding Value must pass other keys on to
// TraceContext's Value.
type TraceContext struct {
	context.Context
	l traceList
}

// Init makes c ctx carrying t on top of the traces ctx already carries.
func (c *TraceContext) Init(ctx context.Context, t *CallTrace) {
	prev, _ := ctx.Value(traceKey{}).(*traceList)
	c.Context, c.l = ctx, traceList{t: t, next: prev}
}

func (c *TraceContext) Value(key any) any {
	if _, ok := key.(traceKey); ok {
		return &c.l
	}
	return c.Context.Value(key)
}

// traces calls f with the session's own trace (its stats), then with each
// trace ctx carries.
func (s *Session) traces(ctx context.Context, f func(*CallTrace)) {
	f(&s.statsTrace)
	l, _ := ctx.Value(traceKey{}).(*traceList)
	for ; l != nil; l = l.next {
		f(l.t)
	}
}

func (s *Session) traceMetaCall(ctx context.Context, name string) {
	s.traces(ctx, func(t *CallTrace) {
		if t.MetaToolCall != nil {
			t.MetaToolCall(ctx, name)
		}
	})
}

func (s *Session) traceSearch(ctx context.Context, loaded int) {
	s.traces(ctx, func(t *CallTrace) {
		if t.SearchDone != nil {
			t.SearchDone(ctx, loaded)
		}
	})
}

func (s *Session) traceRefused(ctx context.Context) {
	s.traces(ctx, func(t *CallTrace) {
		if t.Refused != nil {
			t.Refused(ctx)
		}
	})
}

// upstreamStart runs the UpstreamStart hooks and returns the context to
// send the request with; upstreamDone runs the UpstreamDone hooks with it.
func (s *Session) upstreamStart(ctx context.Context, r *UpstreamRequest) context.Context {
	s.traces(ctx, func(t *CallTrace) {
		if t.UpstreamStart != nil {
			ctx = t.UpstreamStart(ctx, r)
		}
	})
	return ctx
}

func (s *Session) upstreamDone(ctx context.Context, r *UpstreamRequest, res mcp.Result, err error) {
	s.traces(ctx, func(t *CallTrace) {
		if t.UpstreamDone != nil {
			t.UpstreamDone(ctx, r, res, err)
		}
	})
}

func (s *Session) traceInputRequired(ctx context.Context) {
	s.traces(ctx, func(t *CallTrace) {
		if t.InputRequired != nil {
			t.InputRequired(ctx)
		}
	})
}

func (s *Session) traceContinued(ctx, first context.Context) {
	s.traces(ctx, func(t *CallTrace) {
		if t.Continued != nil {
			t.Continued(ctx, first)
		}
	})
}
