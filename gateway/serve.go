package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/version"
)

type sessionKey struct{}

// HTTPHandler serves streamable HTTP at /mcp and /mcp/<toolset>, health at
// /healthz, Prometheus metrics at /metrics, OAuth protected resource
// metadata under /.well-known/oauth-protected-resource, and any extra
// handlers (the chat API, the dashboard) under the same auth.
// NewHTTPServer wraps it with the server's timeouts.
//
// What happens to a request:
//   - on a loopback listener the Host must be loopback too, and a browser
//     Origin must be loopback or listed in auth.allowed_origins (403
//     otherwise): DNS rebinding. This holds for every path, /healthz and
//     the RFC 9728 metadata too;
//   - everything but /healthz and the RFC 9728 metadata needs a token when
//     auth.tokens or auth.oauth is set (admit: 401 with WWW-Authenticate
//     otherwise, 403 for a toolset the principal may not use, 429 past its
//     rate limit); /healthz without one answers only {"status": ...};
//   - bodies over max_request_bytes get 413;
//   - on /mcp and /mcp/<toolset>, mcpEndpoint decides who serves it: the
//     shared modern Session of a 2026-07-28 request, the session its
//     Mcp-Session-Id names (restored from the session store if need be),
//     or, for an initialize, a fresh Session of its own within
//     max_sessions (endpoint.go);
//   - the SDK's plain-text refusals become JSON-RPC errors (jsonRPCErrors);
//   - an answer that is complete at its first flush leaves in one write
//     (answerInOneWrite); one that streams is streamed.
func (g *Gateway) HTTPHandler(extra map[string]http.Handler) http.Handler {
	// A request with a session id is routed by the SDK to its session; the
	// server returned for it is only asked which protocol versions it
	// speaks. It also answers a request without a session id that is not
	// an initialize, in a session the SDK ends at once.
	versions := mcp.NewServer(&mcp.Implementation{Name: "mcp-hub", Version: version.Version},
		&mcp.ServerOptions{SupportedProtocolVersions: hub.SupportedProtocolVersions()})
	// Only a hub Session takes an initialize: one the SDK would accept here
	// would keep a session on this shared server.
	versions.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "initialize" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid initialize request: it must be a JSON-RPC 2.0 request with an id and params"}
			}
			return next(ctx, method, req)
		}
	})
	stream := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s, ok := r.Context().Value(sessionKey{}).(*hub.Session); ok {
			return s.Server()
		}
		return versions
	}, &mcp.StreamableHTTPOptions{
		Logger:              g.hub.SDKLogger(),
		SessionTimeout:      g.Config().SessionTimeout(),
		MaxRequestBodyBytes: g.Config().RequestLimit(),
	})
	endpoint := &mcpEndpoint{g: g, stream: stream, modern: g.modernHTTPHandler()}
	mux := http.NewServeMux()
	mux.Handle("/healthz", g.guardOrigin(http.HandlerFunc(g.serveHealth)))
	mcpAll := g.guard(g.jsonRPCErrors(answerInOneWrite(endpoint)))
	mux.Handle("/mcp", mcpAll)
	mux.Handle("/mcp/{toolset}", mcpAll)
	g.mountGateway(mux)
	for path, handler := range extra {
		mux.Handle(path, g.guard(handler))
	}
	return mux
}

// holdSlot keeps s's session slot until its SDK session ends (the same
// goroutine forgets the session); a session that the SDK did not keep
// (the initialize failed) gives it back now.
func (g *Gateway) holdSlot(s *hub.Session) {
	for ss := range s.Server().Sessions() {
		s.Watch(ss, func() {
			g.storeLink.forget(ss.ID())
			g.slots.release()
		})
		return
	}
	g.slots.release()
}

// guard applies the Host and Origin checks, then auth (admit).
func (g *Gateway) guard(next http.Handler) http.Handler {
	return g.guardOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.admit(w, r, next)
	}))
}

// guardOrigin refuses DNS-rebinding requests: on a loopback listener the
// Host must be loopback too (the SDK checks this for /mcp; the other
// handlers need it as much), and a browser Origin must be loopback or
// allowed.
func (g *Gateway) guardOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
			if lh, _, err := net.SplitHostPort(local.String()); err == nil && config.IsLoopbackHost(lh) && !config.IsLoopbackHost(hostOnly(r.Host)) {
				http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
				return
			}
		}
		if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) && !sameOrigin(r, origin) {
			http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed (add it to auth.allowed_origins)", origin), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (g *Gateway) originAllowed(origin string) bool {
	if slices.Contains(g.Config().Auth.AllowedOrigins, origin) || slices.Contains(g.Config().Auth.AllowedOrigins, "*") {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return config.IsLoopbackHost(u.Hostname())
}

// hostOnly strips the port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

// Health is what /healthz returns.
type Health struct {
	Status   string `json:"status"` // "ok", or "degraded" when a server is not ready
	Sessions int    `json:"sessions"`
	// HTTPSessions are the HTTP sessions open, initialized or not, that
	// count against max_sessions.
	HTTPSessions int `json:"http_sessions"`
	// SessionStore is "ok" or "unreachable" (then Status is "degraded")
	// when session_store is set.
	SessionStore string       `json:"session_store,omitempty"`
	Tools        int          `json:"tools"`
	Servers      []ServerInfo `json:"servers"`
	// Go runtime figures, to watch for leaks (the load test reads them):
	// the goroutine count and the live heap should return to their idle
	// level after sessions close. HeapLiveBytes is as of the last GC.
	Goroutines    int    `json:"goroutines"`
	HeapLiveBytes uint64 `json:"heap_live_bytes"`
	GCCycles      uint64 `json:"gc_cycles"`
	// Config is the config file in service, when it was applied, and
	// the last reload's error (reload.go).
	Config hub.ConfigStatus `json:"config"`
}

// ServerInfo is one upstream's entry in Health.
type ServerInfo struct {
	Name          string  `json:"name"`
	Transport     string  `json:"transport"`
	State         string  `json:"state"`
	Tools         int     `json:"tools"`
	Restarts      int     `json:"restarts"`
	LastError     string  `json:"last_error,omitempty"`
	ConnectMillis float64 `json:"connect_ms"`
	LatencyMillis float64 `json:"last_call_ms"`
	// ListChanges counts the server's list_changed notifications, Relists
	// the re-lists they caused (coalesced).
	ListChanges int64 `json:"list_changes"`
	Relists     int64 `json:"relists"`
	// ProtocolVersion is the MCP revision the live connection negotiated
	// (empty while not connected).
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// Isolation is a stdio server's isolation mode and IsolatedProcesses
	// the processes it runs for principals or sessions; both are left
	// out for a shared server.
	Isolation         string `json:"isolation,omitempty"`
	IsolatedProcesses int    `json:"isolated_processes,omitempty"`
	// Sandbox says how a stdio server is confined ("off", or "on, ...").
	Sandbox string `json:"sandbox,omitempty"`
}

// Health reports the hub's state.
func (g *Gateway) Health() Health {
	out := Health{Status: "ok", Tools: len(g.hub.Catalog().Tools), Sessions: g.hub.SessionCount(), HTTPSessions: g.slots.Open(), Goroutines: runtime.NumGoroutine(), Config: g.hub.ConfigStatus()}
	rt := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(rt)
	if rt[0].Value.Kind() == metrics.KindUint64 && rt[1].Value.Kind() == metrics.KindUint64 {
		out.HeapLiveBytes, out.GCCycles = rt[0].Value.Uint64(), rt[1].Value.Uint64()
	}
	if out.SessionStore = g.storeLink.state(); out.SessionStore == "unreachable" {
		out.Status = "degraded"
	}
	for _, st := range g.hub.Upstreams() {
		if st.State != "ready" && st.State != "disabled" {
			out.Status = "degraded"
		}
		out.Servers = append(out.Servers, ServerInfo{
			Name: st.Name, Transport: st.Transport, State: string(st.State), Tools: st.Tools,
			Restarts: st.Restarts, LastError: st.LastError,
			ConnectMillis: float64(st.ConnectTime.Microseconds()) / 1000,
			LatencyMillis: float64(st.LastLatency.Microseconds()) / 1000,
			ListChanges:   st.ListChanges, Relists: st.Relists,
			ProtocolVersion: st.ProtocolVersion,
			Isolation:       st.Isolation, IsolatedProcesses: st.IsolatedProcesses,
			Sandbox: st.Sandbox,
		})
	}
	return out
}

// serveHealth answers /healthz. Only a principal that the guard would let
// through to /mcp, /metrics and /ui (a verified credential, then the same
// authorization decision: forbidden) sees the details; anyone else gets
// only the overall status: server names, states and last errors are for
// those allowed to call them.
func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	health := g.Health()
	if !g.admitted(r) {
		json.NewEncoder(w).Encode(struct {
			Status string `json:"status"`
		}{health.Status})
		return
	}
	json.NewEncoder(w).Encode(health)
}

// admitted reports whether admit would let r through, rate limits aside:
// its credential verifies and its principal is not forbidden.
func (g *Gateway) admitted(r *http.Request) bool {
	a := g.authn()
	p, err := a.principal(r)
	if err != nil {
		return false
	}
	_, _, denied := g.forbidden(a, p, r)
	return !denied
}
