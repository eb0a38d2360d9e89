package otlp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// record makes spans of every feature the conversion handles: kinds, a
// parent, a remote parent, attributes of every type, events, links, an
// error status, a resource and a scope with attributes.
func record(t *testing.T) []sdktrace.ReadOnlySpan {
	rec := &recorder{}
	res := resource.NewSchemaless(attribute.String("service.name", "otlp-test"), attribute.Int("replica", 2))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(rec), sdktrace.WithResource(res))
	tr := tp.Tracer("mcp-hub/test", trace.WithInstrumentationVersion("1.2.3"), trace.WithInstrumentationAttributes(attribute.Bool("scoped", true)))
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5}, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	ctx, server := tr.Start(trace.ContextWithRemoteSpanContext(context.Background(), remote), "tools/call",
		trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("s", "v"), attribute.Int64("i", -7), attribute.Float64("f", 1.5), attribute.Bool("b", true),
			attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, 2}),
			attribute.Float64Slice("fs", []float64{0.5}), attribute.BoolSlice("bs", []bool{false, true}),
		),
		trace.WithLinks(trace.Link{SpanContext: remote, Attributes: []attribute.KeyValue{attribute.String("why", "retry")}}))
	_, client := tr.Start(ctx, "upstream call", trace.WithSpanKind(trace.SpanKindClient))
	client.AddEvent("sent", trace.WithAttributes(attribute.Int("bytes", 42)), trace.WithTimestamp(time.Unix(1700000000, 5)))
	client.SetStatus(codes.Error, "upstream failed")
	client.End()
	server.SetStatus(codes.Ok, "")
	server.End()
	_, internal := tr.Start(context.Background(), "index", trace.WithSpanKind(trace.SpanKindInternal))
	internal.End()
	return rec.spans
}

type recorder struct{ spans []sdktrace.ReadOnlySpan }

func (r *recorder) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	r.spans = append(r.spans, s...)
	return nil
}
func (r *recorder) Shutdown(context.Context) error { return nil }

// TestSameAsSDKExporter: the same spans sent by this exporter and by the
// SDK's otlptracehttp reach an OTLP/HTTP receiver as equal requests.
func TestSameAsSDKExporter(t *testing.T) {
	spans := record(t)
	for _, gzip := range []bool{false, true} {
		env := func(k string) string {
			switch {
			case k == "OTEL_EXPORTER_OTLP_COMPRESSION" && gzip:
				return "gzip"
			case k == "OTEL_EXPORTER_OTLP_TRACES_HEADERS":
				return "x-tenant=a%20b, bad,authorization=Bearer x"
			}
			return ""
		}
		ours, sdk := fixture.NewOTLPReceiver(t), fixture.NewOTLPReceiver(t)
		e, err := New(ours.URL+"/v1/traces", env)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.ExportSpans(context.Background(), spans); err != nil {
			t.Fatal(err)
		}
		opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(sdk.URL + "/v1/traces")}
		if gzip {
			opts = append(opts, otlptracehttp.WithCompression(otlptracehttp.GzipCompression))
		}
		ref, err := otlptracehttp.New(context.Background(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.ExportSpans(context.Background(), spans); err != nil {
			t.Fatal(err)
		}
		got, want := ours.Exports(), sdk.Exports()
		if len(got) != 1 || len(want) != 1 {
			t.Fatalf("%d and %d requests, want one each", len(got), len(want))
		}
		if !proto.Equal(got[0], want[0]) {
			t.Errorf("gzip %v: request differs from the SDK exporter's:\n ours %v\n sdk  %v", gzip, got[0], want[0])
		}
		n := 0
		for _, rs := range got[0].ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n += len(ss.Spans)
			}
		}
		if n != 3 {
			t.Errorf("%d spans, want 3", n)
		}
	}
}

// TestHeadersRetryTimeout: headers from the environment, a retry after a
// busy answer, and the timeout bounding the retries.
func TestHeadersRetryTimeout(t *testing.T) {
	var calls atomic.Int32
	var header atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header.Store(r.Header.Get("X-Tenant") + "|" + r.Header.Get("Content-Type"))
		if calls.Add(1) == 1 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL + "/", "OTEL_EXPORTER_OTLP_HEADERS": "X-Tenant=t%2C1"}
	e, err := New("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if e.url != srv.URL+"/v1/traces" {
		t.Errorf("url %s", e.url)
	}
	if err := e.ExportSpans(context.Background(), record(t)); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 || header.Load() != "t,1|application/x-protobuf" {
		t.Errorf("%d calls, headers %v", calls.Load(), header.Load())
	}

	// Always busy: the export gives up at the timeout.
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer busy.Close()
	env = map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": busy.URL + "/custom", "OTEL_EXPORTER_OTLP_TIMEOUT": "300"}
	e, err = New("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := e.ExportSpans(context.Background(), record(t)); err == nil {
		t.Error("an always-busy receiver: no error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("gave up after %v, want about the 300 ms timeout", d)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x", "OTEL_EXPORTER_OTLP_CERTIFICATE": "/nonexistent"},
	} {
		if _, err := New("", func(k string) string { return env[k] }); err == nil {
			t.Errorf("%v: no error", env)
		}
	}
}
