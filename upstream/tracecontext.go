package upstream

import (
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// traceHeaders passes the W3C trace context of the call a request belongs
// to (traceparent, tracestate) to an HTTP upstream as headers. The hub puts
// the span of each upstream call in the call's context; a request without
// one (tracing off, or the connection's own traffic) goes out untouched
// and uncopied.
type traceHeaders struct{ base http.RoundTripper }

func (t traceHeaders) RoundTrip(req *http.Request) (*http.Response, error) {
	if trace.SpanContextFromContext(req.Context()).IsValid() {
		req = req.Clone(req.Context()) // a RoundTripper must not change the caller's request
		propagation.TraceContext{}.Inject(req.Context(), propagation.HeaderCarrier(req.Header))
	}
	return t.base.RoundTrip(req)
}
