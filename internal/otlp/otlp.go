// Package otlp is a trace exporter for the OpenTelemetry SDK that sends
// spans over OTLP/HTTP in protobuf (POST <endpoint>/v1/traces), as
// go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp does,
// with the same OTEL_EXPORTER_OTLP_* settings for the HTTP protocol. It
// exists because that package links gRPC and grpc-gateway (its shared
// config code and the collector service definitions), 2.2 MiB of a
// release binary that only ever speaks HTTP (docs/performance.md, "Size").
//
// The request body is a TracesData message: OTLP defines it as
// wire-compatible with ExportTraceServiceRequest (field 1, the resource
// spans), so only the trace protos and google.golang.org/protobuf are
// needed. The conversion of spans follows the SDK exporter's
// internal/tracetransform (Apache-2.0, The OpenTelemetry Authors).
package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Exporter sends spans to one OTLP/HTTP endpoint. It implements
// sdktrace.SpanExporter.
type Exporter struct {
	url     string
	headers http.Header
	gzip    bool
	timeout time.Duration
	client  *http.Client
}

// Env reads a variable as the OTLP exporter specification does: the
// traces-specific name first (OTEL_EXPORTER_OTLP_TRACES_X), then the
// general one (OTEL_EXPORTER_OTLP_X).
type Env func(key string) string

func (env Env) get(name string) string {
	if v := env("OTEL_EXPORTER_OTLP_TRACES_" + name); v != "" {
		return v
	}
	return env("OTEL_EXPORTER_OTLP_" + name)
}

// New returns an exporter to endpointURL (the full URL, path included), or,
// when it is "", to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as is or
// OTEL_EXPORTER_OTLP_ENDPOINT + "/v1/traces". From env (os.Getenv when nil):
// _HEADERS (k=v,k2=v2, values URL-encoded), _TIMEOUT (ms, default 10000),
// _COMPRESSION (gzip or none), _CERTIFICATE (a CA bundle) and
// _CLIENT_CERTIFICATE/_CLIENT_KEY, each also with TRACES_. New connects to
// nothing: the first batch does.
func New(endpointURL string, env Env) (*Exporter, error) {
	if env == nil {
		env = os.Getenv
	}
	e := &Exporter{url: endpointURL, headers: http.Header{}, timeout: 10 * time.Second}
	if e.url == "" {
		if v := env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); v != "" {
			e.url = v
		} else if v := env("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
			e.url = strings.TrimSuffix(v, "/") + "/v1/traces"
		}
	}
	u, err := url.Parse(e.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OTLP endpoint %q: want an http:// or https:// URL", e.url)
	}
	for _, h := range strings.Split(env.get("HEADERS"), ",") {
		k, v, ok := strings.Cut(h, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue // as the SDK does: a malformed pair is skipped
		}
		if dv, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
			e.headers.Set(k, dv)
		}
	}
	if v := env.get("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT=%q: want milliseconds", v)
		}
		e.timeout = time.Duration(ms) * time.Millisecond
	}
	switch c := env.get("COMPRESSION"); c {
	case "gzip":
		e.gzip = true
	case "", "none":
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_COMPRESSION=%q: want gzip or none", c)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if tr.TLSClientConfig, err = tlsConfig(env); err != nil {
		return nil, err
	}
	e.client = &http.Client{Transport: tr}
	return e, nil
}

func tlsConfig(env Env) (*tls.Config, error) {
	ca, cert, key := env.get("CERTIFICATE"), env.get("CLIENT_CERTIFICATE"), env.get("CLIENT_KEY")
	if ca == "" && cert == "" {
		return nil, nil
	}
	cfg := &tls.Config{}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CERTIFICATE: no certificate in %s", ca)
		}
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// ExportSpans sends spans in one request, retrying while the receiver says
// it is busy (429, 502, 503, 504) and the timeout allows.
func (e *Exporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := proto.Marshal(&tracepb.TracesData{ResourceSpans: resourceSpans(spans)})
	if err != nil {
		return err
	}
	if e.gzip {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(body)
		zw.Close()
		body = buf.Bytes()
	}
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	wait := 5 * time.Second / 10
	for {
		retry, after, err := e.post(ctx, body)
		if !retry {
			return err
		}
		if after <= 0 {
			after, wait = wait, min(2*wait, 30*time.Second)
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(after):
		}
	}
}

// post sends body once: retry says whether the failure is one to retry,
// after how long when the receiver said (Retry-After).
func (e *Exporter) post(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	for k, v := range e.headers {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	if e.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return ctx.Err() == nil, 0, fmt.Errorf("OTLP export: %w", err)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK, http.StatusAccepted, http.StatusNoContent:
		return false, 0, nil
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		s, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return true, time.Duration(s) * time.Second, fmt.Errorf("OTLP export: %s", resp.Status)
	}
	return false, 0, fmt.Errorf("OTLP export: %s: %.200s", resp.Status, msg)
}

// Shutdown stops using the exporter's connections.
func (e *Exporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}
