package gateway

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace/noop"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// otlpReceiver is the fixture's OTLP/HTTP receiver, with what these tests
// ask of it.
type otlpReceiver struct{ *fixture.OTLPReceiver }

func newOTLPReceiver(t testing.TB) *otlpReceiver {
	return &otlpReceiver{fixture.NewOTLPReceiver(t)}
}

// provider is an SDK tracer provider that batches spans and exports them
// over OTLP/HTTP to r, as cmd/mcp-hub builds one; flush shuts it down, which
// sends the spans still queued (its owner does that after the hub closed).
func (r *otlpReceiver) provider(t testing.TB) (tp *sdktrace.TracerProvider, flush func()) {
	exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(r.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	flush = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := tp.Shutdown(ctx); err != nil {
			t.Errorf("tracer provider shutdown: %v", err)
		}
	}
	return tp, flush
}

// tracedHub starts a hub on cfg with opts (its log in the test's output
// when the test fails).
func tracedHub(t testing.TB, cfg *config.Config, opts Options) *Gateway {
	t.Helper()
	lg := &fixture.Log{}
	opts.Hub.Logger, opts.Hub.StartupWait = slog.New(slog.NewTextHandler(lg, nil)), 20*time.Second
	if opts.Hub.Builtin == nil {
		opts.Hub.Builtin = builtins(cfg, opts.Hub.Logger)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := New(ctx, cfg, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() {
		h.Close()
		if t.Failed() {
			t.Logf("hub log:\n%s", lg.String())
		}
	})
	return h
}

// span finds a received span by trace, name and kind.
func (r *otlpReceiver) span(traceID, name string, kind tracepb.Span_SpanKind) *tracepb.Span {
	for _, s := range r.Spans() {
		if hex.EncodeToString(s.TraceId) == traceID && s.Name == name && s.Kind == kind {
			return s
		}
	}
	return nil
}

func spanAttr(s *tracepb.Span, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// traceparentUpstream is an MCP server over streamable HTTP on 127.0.0.1
// that records the traceparent header of every request (the "gw" tools;
// its meta tool records the _meta).
type traceparentUpstream struct {
	gw      *gwUpstream
	mu      sync.Mutex
	headers []string
}

func newTraceparentUpstream(t testing.TB) (*traceparentUpstream, string) {
	u := &traceparentUpstream{gw: &gwUpstream{}}
	server := u.gw.server()
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			u.mu.Lock()
			u.headers = append(u.headers, tp)
			u.mu.Unlock()
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return u, srv.URL
}

// TestTracingThroughHTTPUpstream: a call through the hub to an HTTP upstream
// arrives at an OTLP receiver as a server span (the hub's request, child of
// the client's trace context) and a client span (the upstream call, its
// child); the upstream sees the trace context in its headers and in _meta
// (acceptance 4). The client's context comes in _meta, or in HTTP headers.
func TestTracingThroughHTTPUpstream(t *testing.T) {
	const (
		traceID    = "4bf92f3577b34da6a3ce929d0e0e4736"
		clientSpan = "00f067aa0ba902b7"
	)
	for _, via := range []string{"_meta", "HTTP header"} {
		t.Run(via, func(t *testing.T) {
			rec := newOTLPReceiver(t)
			up, upURL := newTraceparentUpstream(t)
			cfg := fixture.NewConfig(config.Discovery{}, &config.Server{Upstream: config.Upstream{Name: "up", URL: upURL}})
			tp, flush := rec.provider(t)
			h := tracedHub(t, cfg, Options{Hub: hub.Options{Builtin: (&gwUpstream{}).builtin(fixture.NewServers())}, TracerProvider: tp})
			srv := httptest.NewServer(h.HTTPHandler(nil))
			t.Cleanup(srv.Close)
			url := srv.URL
			traceparent := "00-" + traceID + "-" + clientSpan + "-01"
			headers := map[string]string{}
			params := &mcp.CallToolParams{Name: "up__meta", Arguments: map[string]any{}}
			if via == "_meta" {
				params.Meta = mcp.Meta{"traceparent": traceparent}
			} else {
				headers["traceparent"] = traceparent
			}
			cs, err := fixture.HTTPClient(t, url+"/mcp", headers)
			if err != nil {
				t.Fatal(err)
			}
			if res, err := cs.CallTool(fixture.Context(t), params); err != nil || res.IsError {
				t.Fatalf("call: %v %v", err, res)
			}
			h.Close()
			flush() // the provider's owner sends the spans queued, after the hub closed
			server := rec.span(traceID, "tools/call", tracepb.Span_SPAN_KIND_SERVER)
			client := rec.span(traceID, "tools/call", tracepb.Span_SPAN_KIND_CLIENT)
			if server == nil || client == nil {
				t.Fatalf("spans of trace %s: server %v, client %v; received %d spans", traceID, server != nil, client != nil, len(rec.Spans()))
			}
			if got := hex.EncodeToString(server.ParentSpanId); got != clientSpan {
				t.Errorf("the hub's span has parent %s, want the client's %s", got, clientSpan)
			}
			if !bytes.Equal(client.ParentSpanId, server.SpanId) {
				t.Errorf("the upstream call's span has parent %x, want the hub's request span %x", client.ParentSpanId, server.SpanId)
			}
			for _, c := range []struct {
				span       *tracepb.Span
				key, value string
			}{
				{server, "tool", "up__meta"}, {server, "server", "up"}, {server, "outcome", "ok"}, {server, "mcp.method.name", "tools/call"},
				{client, "tool", "meta"}, {client, "server", "up"}, {client, "outcome", "ok"},
			} {
				if got := spanAttr(c.span, c.key); got != c.value {
					t.Errorf("span %s (%s): %s = %q, want %q", c.span.Name, c.span.Kind, c.key, got, c.value)
				}
			}
			want := "00-" + traceID + "-" + hex.EncodeToString(client.SpanId) + "-01"
			up.mu.Lock()
			headersSeen := strings.Join(up.headers, " ")
			up.mu.Unlock()
			if !strings.Contains(headersSeen, want) {
				t.Errorf("upstream traceparent headers %q, want %s", headersSeen, want)
			}
			up.gw.mu.Lock()
			defer up.gw.mu.Unlock()
			if len(up.gw.metas) != 1 || up.gw.metas[0]["traceparent"] != want {
				t.Errorf("upstream _meta %v, want traceparent %s", up.gw.metas, want)
			}
		})
	}
}

// TestTracingStdioMeta: a stdio upstream's raw tools/call carries the trace
// context in _meta too; resources/read gets its spans as well.
func TestTracingStdioMeta(t *testing.T) {
	rec := newOTLPReceiver(t)
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-meta-tool", "-features"))
	tp, flush := rec.provider(t)
	h := tracedHub(t, cfg, Options{TracerProvider: tp})
	cs := connectClient(t, h, "")
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "fx__meta", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-b7ad6b7169203331-01", "tracestate": "vendor=x", "other": "kept"}})
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(fixture.ResultText(res)), &meta); err != nil {
		t.Fatalf("meta tool answered %q: %v", fixture.ResultText(res), err)
	}
	const readTrace = "1af7651916cd43dd8448eb211c80319d"
	if _, err := cs.ReadResource(fixture.Context(t), &mcp.ReadResourceParams{URI: "fixture://info",
		Meta: mcp.Meta{"traceparent": "00-" + readTrace + "-c7ad6b7169203331-01"}}); err != nil {
		t.Fatal(err)
	}
	h.Close()
	flush()
	readServer := rec.span(readTrace, "resources/read", tracepb.Span_SPAN_KIND_SERVER)
	readClient := rec.span(readTrace, "resources/read", tracepb.Span_SPAN_KIND_CLIENT)
	if readServer == nil || readClient == nil || !bytes.Equal(readClient.ParentSpanId, readServer.SpanId) || spanAttr(readClient, "server") != "fx" {
		t.Errorf("resources/read: want a server span and its child client span with server fx; got %v and %v", readServer, readClient)
	}
	client := rec.span(traceID, "tools/call", tracepb.Span_SPAN_KIND_CLIENT)
	if client == nil {
		t.Fatalf("no upstream call span in trace %s", traceID)
	}
	want := "00-" + traceID + "-" + hex.EncodeToString(client.SpanId) + "-01"
	if meta["traceparent"] != want || meta["tracestate"] != "vendor=x" || meta["other"] != "kept" {
		t.Errorf("the stdio upstream's _meta = %v, want traceparent %s, the tracestate and the other keys", meta, want)
	}
}

// TestTracingOffCostsNothing: without a tracer provider, or with a no-op
// one, a call's trace bookkeeping allocates nothing and leaves _meta alone
// (the hot path).
func TestTracingOffCostsNothing(t *testing.T) {
	for _, c := range []struct {
		name string
		tp   Options
	}{
		{"no provider", Options{}},
		{"no-op provider", Options{TracerProvider: noop.NewTracerProvider()}},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts := c.tp
			opts.Hub.Builtin = fixture.NewServers().Builtin
			h := tracedHub(t, fixture.SmallConfig(), opts)
			if h.tracing != nil {
				t.Fatal("tracing is on")
			}
			tool, _ := h.hub.Catalog().Tool("clock__now")
			params := &mcp.CallToolParams{Name: "now"}
			res := &upstream.RawResult{JSON: json.RawMessage(`{"content":[]}`)}
			ctx := context.WithValue(context.Background(), callRecordKey{}, &callRecord{})
			r := &hub.UpstreamRequest{Method: "tools/call", Server: tool.Server, Tool: tool, Meta: &params.Meta}
			allocs := testing.AllocsPerRun(200, func() {
				c := h.callTrace.UpstreamStart(ctx, r)
				h.callTrace.UpstreamDone(c, r, res, nil)
			})
			if allocs != 0 || params.Meta != nil {
				t.Errorf("tracing off: %v allocations per call, _meta %v; want 0 and untouched", allocs, params.Meta)
			}
		})
	}
}
