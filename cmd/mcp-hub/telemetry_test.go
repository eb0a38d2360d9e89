package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestTracingConfig: tracing is off by default and on with the config block
// or the standard environment variable; the SDK's switches turn it off.
func TestTracingConfig(t *testing.T) {
	for _, c := range []struct {
		name          string
		cfg           config.Telemetry
		env, off, exp string
		on            bool
	}{
		{"default", config.Telemetry{}, "", "", "", false},
		{"config block", config.Telemetry{OTLPEndpoint: "http://127.0.0.1:4318"}, "", "", "", true},
		{"environment", config.Telemetry{}, "http://127.0.0.1:4318", "", "", true},
		{"SDK disabled", config.Telemetry{OTLPEndpoint: "http://127.0.0.1:4318"}, "", "true", "", false},
		{"exporter none", config.Telemetry{OTLPEndpoint: "http://127.0.0.1:4318"}, "", "", "none", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", c.env)
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			t.Setenv("OTEL_SDK_DISABLED", c.off)
			t.Setenv("OTEL_TRACES_EXPORTER", c.exp)
			tp, stop, err := startTracing(&config.Config{Telemetry: c.cfg})
			if err != nil {
				t.Fatal(err)
			}
			defer stop()
			if (tp != nil) != c.on {
				t.Errorf("tracing on = %v, want %v", tp != nil, c.on)
			}
		})
	}
}

// TestTracingCallCommand: `call` with a telemetry section builds the
// tracer provider, hands it to the hub, and sends the spans to the OTLP/HTTP
// receiver before it exits (the provider is shut down after the hub
// closed), under the configured service name.
func TestTracingCallCommand(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_SERVICE_NAME", "")
	receiver := fixture.NewOTLPReceiver(t)
	path := filepath.Join(t.TempDir(), "hub.yaml")
	cfg := "servers:\n  t: {builtin: time}\ntelemetry: {otlp_endpoint: " + receiver.URL + "/, service_name: traced-hub}\n"
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"mcp-hub", "--config", path, "call", "t__day_of_week", "date=2026-01-05"}, io.NopCloser(strings.NewReader("")), &stdout, &stderr); code != 0 {
		t.Fatalf("call exited %d: %s%s", code, stdout.String(), stderr.String())
	}
	// run has returned: every span must be at the receiver already.
	var service string
	kinds := map[string]bool{}
	for _, e := range receiver.Exports() {
		for _, rs := range e.ResourceSpans {
			for _, kv := range rs.Resource.GetAttributes() {
				if kv.Key == "service.name" {
					service = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					kinds[s.Name+" "+s.Kind.String()] = true
				}
			}
		}
	}
	if service != "traced-hub" {
		t.Errorf("service.name = %q, want traced-hub", service)
	}
	if !kinds["tools/call SPAN_KIND_SERVER"] || !kinds["tools/call SPAN_KIND_CLIENT"] {
		t.Errorf("spans received: %v; want the request's server span and the upstream call's client span", kinds)
	}
}
