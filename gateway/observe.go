package gateway

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-hub/mcp-hub/hub"
)

// What the gateway reports about each client request, in one place: a
// layer of every session (observe, the hub's Hooks.Observe, outside the
// hub's panic guard) times the request, runs its span
// when tracing is on, and when it ends counts it in the metrics and writes
// its audit line. What the hub did meanwhile comes to the gateway's
// hub.CallTrace (newCallTrace), which notes it in the request's callRecord:
// which tool of which server answered and how, or how many tools a search
// loaded.

// callRecord is what handling one tools/call did. The hub's hooks write
// it on the goroutine that runs the call, which for a 2026-07-28 call is
// not the request's: a request that ends while the call is still ending
// (a retry cancelled as the upstream is cancelled) reads it as the call's
// goroutine writes it. Hence mu.
type callRecord struct {
	mu sync.Mutex
	v  recorded
}

func (r *callRecord) set(f func(*recorded)) {
	r.mu.Lock()
	f(&r.v)
	r.mu.Unlock()
}

func (r *callRecord) get() recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.v
}

// recorded is what a callRecord holds.
type recorded struct {
	kind    recordKind
	tool    string // exposed name
	server  string
	label   string // the tool's label in the metrics (toolLabel)
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

// callReport is what report needs of the tools/call a request carries. A
// 2026-07-28 call that its upstream asks the client something during is
// answered input_required, and goes on in the client's retry of it, maybe
// over several rounds; its upstream's hooks fill in the record of the
// request that began it. So a request answered input_required reports
// nothing (suspended), and the retry that gets the call's answer reports
// the call once, with its first request's record and start
// (hub.CallTrace's InputRequired and Continued).
type callReport struct {
	rec       *callRecord
	start     time.Time
	suspended bool
}

type callReportKey struct{}

func reportOf(ctx context.Context) *callReport {
	r, _ := ctx.Value(callReportKey{}).(*callReport)
	return r
}

// observe is the hub's Hooks.Observe: the layer of every session that
// observes its requests, at its place in the session's receiving chain
// (hub's Session.receiving: outside the hub's guard, inside a session
// store's layer).
func (g *Gateway) observe(s *hub.Session) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			tr := g.tracing
			if method != "tools/call" {
				if tr == nil || strings.HasPrefix(method, "notifications/") {
					return next(ctx, method, req)
				}
				ctx, span := tr.startRequest(ctx, s, method, req)
				res, err := next(hub.WithCallTrace(ctx, &g.callTrace), method, req)
				g.endSpan(span, "", err)
				return res, err
			}
			rec := &callRecord{}
			rep := &callReport{rec: rec, start: time.Now()}
			ctx = context.WithValue(context.WithValue(ctx, callRecordKey{}, rec), callReportKey{}, rep)
			ctx = hub.WithCallTrace(ctx, &g.callTrace)
			var span trace.Span
			if tr != nil {
				ctx, span = tr.startRequest(ctx, s, method, req)
			}
			res, err := next(ctx, method, req)
			g.report(s, req.(*mcp.CallToolRequest), rep, res, err, span)
			return res, err
		}
	}
}

// report counts a finished tools/call, writes its audit line and ends its
// span. A request answered input_required only ends its span: its call is
// counted and audited once, when a retry gets its answer (callReport). It
// allocates nothing unless tracing or the audit log is on.
func (g *Gateway) report(s *hub.Session, req *mcp.CallToolRequest, rep *callReport, res mcp.Result, err error, span trace.Span) {
	if rep.suspended {
		// The call's record is its upstream's to fill in meanwhile:
		// nothing of it is read here.
		if span != nil {
			span.SetAttributes(attrTool.String(hub.ShownName(req.Params.Name)))
			g.endSpan(span, outcomeInputRequired, err)
		}
		return
	}
	rec, took := rep.rec.get(), time.Since(rep.start)
	method, tool, server, outcome := "tools/call", hub.ShownName(req.Params.Name), "", OutcomeError
	switch rec.kind {
	case recordForwarded:
		g.metrics.observeCall(rec.server, rec.label, rec.outcome, took)
		tool, server, outcome = rec.tool, rec.server, rec.outcome
	case recordSearch:
		g.metrics.observeSearch(took)
		method, outcome = hub.SearchToolsName, outcomeOf(res, err)
	default:
		g.metrics.observeCall(hub.MetaServer, otherTool, OutcomeError, took)
	}
	if span != nil {
		if rec.kind == recordSearch {
			span.SetName(hub.SearchToolsName)
		}
		span.SetAttributes(attrTool.String(tool))
		if server != "" {
			span.SetAttributes(attrServer.String(server))
		}
		g.endSpan(span, outcome, err)
	}
	if g.audit != nil {
		e := &auditEntry{Method: method, Tool: tool, Server: server, Outcome: outcome, Loaded: rec.loaded, DurationMS: millis(took)}
		describe(s, e)
		g.audit.arguments(e, req.Params.Arguments)
		g.audit.write(e)
	}
}

// newCallTrace is the gateway's subscriber to what the hub does for a
// request (hub.CallTrace): it notes a search and an upstream tool's answer
// in the request's callRecord, and when tracing is on runs the child span
// of each request to an upstream, whose trace context goes on in the
// request's _meta (traceparent, tracestate), which every upstream gets;
// HTTP upstreams also get it as headers (upstream.traceHeaders), from the
// context returned.
func (g *Gateway) newCallTrace() hub.CallTrace {
	return hub.CallTrace{
		MetaToolCall: func(ctx context.Context, name string) {
			if rec := recordOf(ctx); rec != nil && name == hub.SearchToolsName {
				rec.set(func(v *recorded) { v.kind, v.loaded = recordSearch, 0 })
			}
		},
		SearchDone: func(ctx context.Context, loaded int) {
			if rec := recordOf(ctx); rec != nil {
				rec.set(func(v *recorded) { v.kind, v.loaded = recordSearch, loaded })
			}
		},
		InputRequired: func(ctx context.Context) {
			if rep := reportOf(ctx); rep != nil {
				rep.suspended = true
			}
		},
		Continued: func(ctx, first context.Context) {
			if rep, began := reportOf(ctx), reportOf(first); rep != nil && began != nil {
				rep.rec, rep.start, rep.suspended = began.rec, began.start, false
			}
		},
		UpstreamStart: func(ctx context.Context, r *hub.UpstreamRequest) context.Context {
			if g.tracing == nil {
				return ctx
			}
			attrs := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
			if r.Tool != nil {
				attrs = append(attrs, trace.WithAttributes(attrServer.String(r.Server), attrTool.String(hub.ShownName(r.Tool.Original))))
			} else {
				attrs = append(attrs, trace.WithAttributes(attrServer.String(r.Server)))
			}
			ctx, _ = g.tracing.tracer.Start(ctx, r.Method, attrs...)
			if *r.Meta == nil {
				*r.Meta = mcp.Meta{}
			}
			propagation.TraceContext{}.Inject(ctx, metaCarrier(*r.Meta))
			return ctx
		},
		UpstreamDone: func(ctx context.Context, r *hub.UpstreamRequest, res mcp.Result, err error) {
			outcome := OutcomeOK
			if r.Tool != nil {
				outcome = outcomeOf(res, err)
				if rec := recordOf(ctx); rec != nil {
					rec.set(func(v *recorded) {
						*v = recorded{kind: recordForwarded, tool: r.Tool.Name, server: r.Tool.Server, label: toolLabel(r.Tool.Original, r.Tool.Position), outcome: outcome}
					})
				}
			} else if err != nil {
				outcome = outcomeOf(nil, err)
			}
			if g.tracing != nil {
				g.endSpan(trace.SpanFromContext(ctx), outcome, err)
			}
		},
	}
}

// outcomeInputRequired is the outcome of a span whose request was
// answered input_required: the call goes on in the client's retry.
const outcomeInputRequired = "input_required"

// outcomeOf classifies a tool call's answer.
func outcomeOf(res mcp.Result, err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return OutcomeTimeout
	case err != nil:
		return OutcomeError
	case hub.IsToolError(res):
		return OutcomeToolError
	}
	return OutcomeOK
}

// endSpan sets a span's outcome and status (an error's text redacted) and ends it.
func (g *Gateway) endSpan(span trace.Span, outcome string, err error) {
	if outcome != "" {
		span.SetAttributes(attrOutcome.String(outcome))
	}
	switch {
	case err != nil:
		span.SetStatus(codes.Error, g.redact.String(err.Error()))
	case outcome == OutcomeError || outcome == OutcomeTimeout:
		span.SetStatus(codes.Error, outcome)
	}
	span.End()
}

// describe fills in who and where for an audit entry of s.
func describe(s *hub.Session, e *auditEntry) {
	p := s.Principal()
	e.Session, e.Principal, e.Kind = s.ID(), p.Key(), p.Kind
	e.Toolset = s.ToolsetName()
	if ss := s.ServerSession(); ss != nil {
		e.MCPSession = ss.ID()
	}
}

// sessionStarted and sessionEnded write the session's audit lines.
func (g *Gateway) sessionStarted(s *hub.Session) {
	if g.audit == nil {
		return
	}
	e := &auditEntry{Method: auditSessionStart}
	describe(s, e)
	if ss := s.ServerSession(); ss != nil {
		if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
			e.Client = ip.ClientInfo.Name + "/" + ip.ClientInfo.Version
		}
	}
	g.audit.write(e)
}

func (g *Gateway) sessionEnded(s *hub.Session) {
	if g.audit == nil {
		return
	}
	e := &auditEntry{Method: auditSessionEnd, DurationMS: millis(time.Since(s.Opened()))}
	describe(s, e)
	g.audit.write(e)
}

// toolsLoaded counts the tools a session loaded and, with a session
// store, writes its loaded set there before the call that loaded them
// answers.
func (g *Gateway) toolsLoaded(s *hub.Session, added []string) {
	g.metrics.toolsLoaded.Add(float64(len(added)))
	g.storeLink.saveLoaded(s)
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
