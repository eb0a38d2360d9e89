package gateway

import (
	"context"
	"reflect"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/mcp-hub/mcp-hub/hub"

	"github.com/mcp-hub/mcp-hub/internal/version"
)

// tracing is the hub's tracer, from the provider its caller gave it (not
// the process-global one). A hub without tracing has none: the hot path
// then checks one nil pointer and touches nothing of OpenTelemetry.
type tracing struct {
	tracer trace.Tracer
}

// newTracing returns nil when tracing is off: no provider, or a no-op one.
// The caller owns the provider: it flushes and shuts it down after the hub
// closes.
func newTracing(tp trace.TracerProvider) *tracing {
	switch tp.(type) {
	case nil, noop.TracerProvider, *noop.TracerProvider:
		return nil
	}
	return &tracing{tracer: tp.Tracer("github.com/mcp-hub/mcp-hub/gateway", trace.WithInstrumentationVersion(version.Version))}
}

// Span attributes.
const (
	attrMethod     = attribute.Key("mcp.method.name")
	attrSession    = attribute.Key("mcp.session.id") // the HTTP Mcp-Session-Id
	attrHubSession = attribute.Key("mcp_hub.session")
	attrServer     = attribute.Key("server")
	attrTool       = attribute.Key("tool")
	attrOutcome    = attribute.Key("outcome")
)

// startRequest starts the span of one client request, continuing the trace
// the request's `_meta.traceparent` names, or else its HTTP headers'.
func (t *tracing) startRequest(ctx context.Context, s *hub.Session, method string, req mcp.Request) (context.Context, trace.Span) {
	ctx = propagation.TraceContext{}.Extract(ctx, traceCarrier(req))
	ctx, span := t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attrMethod.String(method), attrHubSession.Int64(s.ID())))
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && ss.ID() != "" {
		span.SetAttributes(attrSession.String(ss.ID()))
	}
	return ctx, span
}

// traceCarrier is where a request's trace context is: its _meta when that
// has a traceparent, else the HTTP request's headers.
func traceCarrier(req mcp.Request) propagation.TextMapCarrier {
	if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
		if m := p.GetMeta(); m != nil {
			if _, ok := m["traceparent"]; ok {
				return metaCarrier(m)
			}
		}
	}
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		return propagation.HeaderCarrier(ex.Header)
	}
	return metaCarrier(nil)
}

// metaCarrier reads and writes W3C trace context in an MCP `_meta`.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
