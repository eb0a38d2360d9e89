package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/otlp"
	"github.com/mcp-hub/mcp-hub/internal/version"
)

// The hub only speaks the OpenTelemetry API; the program builds the SDK
// tracer provider and its OTLP/HTTP exporter (internal/otlp, which links no
// gRPC) here, from the config's
// telemetry section and the OTEL_* environment, and owns it: a provider of
// the hub's own, not the process-global one.

// startTracing returns the tracer provider for a hub on cfg, nil when
// tracing is off, and stop, which sends the spans still queued (waiting at
// most a few seconds). Call stop after the hub closed, so the spans of its
// last requests go too. A bad exporter or resource setting is a config
// error.
func startTracing(cfg *config.Config) (trace.TracerProvider, func(), error) {
	tp, err := newTracerProvider(cfg.Telemetry)
	if err != nil {
		return nil, nil, &config.Error{Path: cfg.Path, Msg: err.Error()}
	}
	if tp == nil {
		return nil, func() {}, nil
	}
	stop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		tp.Shutdown(ctx)
	}
	return tp, stop, nil
}

// newTracerProvider returns nil when tracing is off: neither the config nor
// OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT names a receiver, or
// OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none.
func newTracerProvider(cfg config.Telemetry) (*sdktrace.TracerProvider, error) {
	env := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") + os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if cfg.OTLPEndpoint == "" && env == "" {
		return nil, nil
	}
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
		return nil, nil
	}
	endpoint := ""
	if cfg.OTLPEndpoint != "" {
		endpoint = strings.TrimSuffix(cfg.OTLPEndpoint, "/") + "/v1/traces"
	}
	// New only configures: it connects when the first batch is sent.
	exp, err := otlp.New(endpoint, nil)
	if err != nil {
		return nil, fmt.Errorf("telemetry: OTLP exporter: %w", err)
	}
	name := cfg.ServiceName
	if name == "" {
		name = "mcp-hub"
	}
	res, err := resource.New(context.Background(),
		resource.WithAttributes(attribute.String("service.name", name), attribute.String("service.version", version.Version)),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}
