package hub

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// What the hub reports about each client request, in one place: the
// session's outermost middleware (observe) times the request, runs its
// span when tracing is on, and when it ends counts it in the metrics and
// writes its audit line. The code that handles the request only says what
// it did, in the request's callRecord: callUpstream which tool of which
// server answered and how (beginUpstream), searchTools how many tools it
// loaded (noteSearch).

// callRecord is what handling one tools/call did.
type callRecord struct {
	kind    recordKind
	tool    string // exposed name
	server  string
	label   string // the tool's label in the metrics (Tool.metricLabel)
	outcome string
	loaded  int // tools a search loaded
}

type recordKind int

const (
	recordRefused   recordKind = iota // answered by the hub: unknown, not loaded, bad arguments
	recordForwarded                   // an upstream tool was called
	recordSearch                      // search_tools ran
)

type callRecordKey struct{}

func recordOf(ctx context.Context) *callRecord {
	r, _ := ctx.Value(callRecordKey{}).(*callRecord)
	return r
}

// observe is the session's outermost middleware (see above).
func (s *Session) observe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		tr := s.hub.tracing
		if method != "tools/call" {
			if tr == nil || strings.HasPrefix(method, "notifications/") {
				return next(ctx, method, req)
			}
			ctx, span := tr.startRequest(ctx, s, method, req)
			res, err := next(ctx, method, req)
			s.hub.endSpan(span, "", err)
			return res, err
		}
		start := time.Now()
		rec := &callRecord{}
		ctx = context.WithValue(ctx, callRecordKey{}, rec)
		var span trace.Span
		if tr != nil {
			ctx, span = tr.startRequest(ctx, s, method, req)
		}
		res, err := next(ctx, method, req)
		s.report(req.(*mcp.CallToolRequest), rec, res, err, time.Since(start), span)
		return res, err
	}
}

// report counts a finished tools/call, writes its audit line and ends its
// span. It allocates nothing unless tracing or the audit log is on.
func (s *Session) report(req *mcp.CallToolRequest, rec *callRecord, res mcp.Result, err error, took time.Duration, span trace.Span) {
	h := s.hub
	method, tool, server, outcome := "tools/call", shownName(req.Params.Name), "", OutcomeError
	switch rec.kind {
	case recordForwarded:
		h.metrics.observeCall(rec.server, rec.label, rec.outcome, took)
		tool, server, outcome = rec.tool, rec.server, rec.outcome
	case recordSearch:
		h.metrics.observeSearch(took)
		method, outcome = SearchToolsName, outcomeOf(res, err)
	default:
		h.metrics.observeCall(metaServer, otherTool, OutcomeError, took)
	}
	if span != nil {
		if rec.kind == recordSearch {
			span.SetName(SearchToolsName)
		}
		span.SetAttributes(attrTool.String(tool))
		if server != "" {
			span.SetAttributes(attrServer.String(server))
		}
		h.endSpan(span, outcome, err)
	}
	if h.audit != nil {
		e := &auditEntry{Method: method, Tool: tool, Server: server, Outcome: outcome, Loaded: rec.loaded, DurationMS: millis(took)}
		s.describe(e)
		h.audit.arguments(e, req.Params.Arguments)
		h.audit.write(e)
	}
}

// noteSearch records in the request's callRecord that search_tools ran.
func noteSearch(ctx context.Context, loaded int) {
	if rec := recordOf(ctx); rec != nil {
		rec.kind, rec.loaded = recordSearch, loaded
	}
}

// upstreamCall is one call to an upstream tool while it runs.
type upstreamCall struct {
	ctx  context.Context // carries the call's span, when tracing
	span trace.Span      // nil when tracing is off
	tool *Tool
	rec  *callRecord
	hub  *Hub
}

// beginUpstream starts the child span of a call to an upstream tool and
// passes the trace context on in the call's _meta (traceparent,
// tracestate), which every upstream gets; HTTP upstreams also get it as
// headers (upstream.traceHeaders), from the returned call's context.
func (h *Hub) beginUpstream(ctx context.Context, t *Tool, params *mcp.CallToolParams) upstreamCall {
	c := upstreamCall{ctx: ctx, tool: t, rec: recordOf(ctx), hub: h}
	if h.tracing == nil {
		return c
	}
	c.ctx, c.span = h.tracing.tracer.Start(ctx, "tools/call", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attrServer.String(t.Server), attrTool.String(shownName(t.Original))))
	if params.Meta == nil {
		params.Meta = mcp.Meta{}
	}
	propagation.TraceContext{}.Inject(c.ctx, metaCarrier(params.Meta))
	return c
}

// end records how the call went.
func (c upstreamCall) end(res mcp.Result, err error) {
	outcome := outcomeOf(res, err)
	if c.rec != nil {
		*c.rec = callRecord{kind: recordForwarded, tool: c.tool.Name, server: c.tool.Server, label: c.tool.metricLabel, outcome: outcome}
	}
	if c.span != nil {
		c.hub.endSpan(c.span, outcome, err)
	}
}

// traceUpstream starts the child span of another request to an upstream
// (resources/read, prompts/get) and passes its context on in the request's
// _meta; end ends it. Without tracing it does nothing.
func (h *Hub) traceUpstream(ctx context.Context, server, method string, meta *mcp.Meta) (context.Context, func(error)) {
	if h.tracing == nil {
		return ctx, noSpan
	}
	ctx, span := h.tracing.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrServer.String(server)))
	if *meta == nil {
		*meta = mcp.Meta{}
	}
	propagation.TraceContext{}.Inject(ctx, metaCarrier(*meta))
	return ctx, func(err error) {
		outcome := OutcomeOK
		if err != nil {
			outcome = outcomeOf(nil, err)
		}
		h.endSpan(span, outcome, err)
	}
}

func noSpan(error) {}

// outcomeOf classifies a tool call's answer.
func outcomeOf(res mcp.Result, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case err != nil:
		return OutcomeError
	case upstream.IsError(res):
		return OutcomeToolError
	}
	return OutcomeOK
}

// endSpan sets a span's outcome and status (an error's text redacted) and ends it.
func (h *Hub) endSpan(span trace.Span, outcome string, err error) {
	if outcome != "" {
		span.SetAttributes(attrOutcome.String(outcome))
	}
	switch {
	case err != nil:
		span.SetStatus(codes.Error, h.redact.String(err.Error()))
	case outcome == OutcomeError || outcome == OutcomeTimeout:
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
}

// describe fills in who and where for an audit entry of s.
func (s *Session) describe(e *auditEntry) {
	p := s.who()
	e.Session, e.Principal, e.Kind = s.id, p.Key(), p.Kind
	e.Toolset = s.toolsetName
	if ss := s.serverSession(); ss != nil {
		e.MCPSession = ss.ID()
	}
}

// sessionStarted and sessionEnded write the session's audit lines.
func (h *Hub) sessionStarted(s *Session) {
	if h.audit == nil {
		return
	}
	e := &auditEntry{Method: auditSessionStart}
	s.describe(e)
	if ss := s.serverSession(); ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			e.Client = ip.ClientInfo.Name + "/" + ip.ClientInfo.Version
		}
	}
	h.audit.write(e)
}

func (h *Hub) sessionEnded(s *Session) {
	if h.audit == nil {
		return
	}
	e := &auditEntry{Method: auditSessionEnd, DurationMS: millis(time.Since(s.opened))}
	s.describe(e)
	h.audit.write(e)
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
