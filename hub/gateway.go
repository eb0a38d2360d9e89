package hub

import (
	"net/http"
)

// The team-deployment pieces (docs/gateway.md) are set up and
// mounted here; each lives in its own file: principal.go and
// authenticate.go (who may connect), oauthrs.go (JWT access tokens and RFC
// 9728 metadata), ratelimit.go, metrics.go, telemetry.go (tracing),
// audit.go, and observe.go (how a request is reported).

// startReporting sets up auth, metrics and the audit log (tracing is the
// caller's: Options.TracerProvider). A problem with any of them is a config
// error.
func (h *Hub) startReporting() error {
	cfg := h.Config()
	if cfg.Auth.OAuth != nil {
		if err := cfg.Auth.OAuth.validate(); err != nil {
			return &ConfigError{Path: cfg.Path, Msg: err.Error()}
		}
	}
	h.auth.Store(newAuthenticator(cfg.Auth, h.hashKey.Load(), h.log))
	h.metrics = newMetrics(h)
	var err error
	h.audit, err = openAudit(cfg, h.hashKey.Load(), h.redact, h.log)
	return err
}

// stopReporting closes the audit log. The spans still queued are the
// tracer provider's: its owner flushes them after Close.
func (h *Hub) stopReporting() {
	h.audit.close()
	h.authn().close()
}

// mountGateway adds the team-deployment endpoints to the hub's HTTP mux:
// /metrics behind the same guard as /mcp, and the RFC 9728 metadata
// (without auth, for clients to discover where to log in, but behind the
// Host and Origin checks like every path).
func (h *Hub) mountGateway(mux *http.ServeMux) {
	mux.Handle("/metrics", h.guard(h.MetricsHandler()))
	prm := h.guardOrigin(http.HandlerFunc(h.servePRM))
	mux.Handle(wellKnownPRM, prm)
	mux.Handle(wellKnownPRM+"/", prm)
}

// MetricsHandler serves the hub's Prometheus metrics, unguarded: HTTPHandler
// mounts it at /metrics behind auth; MetricsHTTPHandler guards it for a
// listener of its own.
func (h *Hub) MetricsHandler() http.Handler { return h.metrics.handler() }

// MetricsHTTPHandler serves /metrics alone, behind the Host/Origin check and
// auth of /mcp: for `serve --metrics ADDR`, next to a stdio hub.
func (h *Hub) MetricsHTTPHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", h.guard(h.MetricsHandler()))
	return mux
}
