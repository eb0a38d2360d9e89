package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/version"
)

// DefaultMaxRequestBytes bounds one HTTP request body.
const DefaultMaxRequestBytes = 4 << 20

// ServeStdio serves one session over r and w (the process's stdin and
// stdout) until the client disconnects or ctx ends.
func (h *Hub) ServeStdio(ctx context.Context, toolset string, r io.ReadCloser, w io.WriteCloser) error {
	s, err := h.NewSession(toolset)
	if err != nil {
		return err
	}
	maxLine := int(h.maxRequestBytes())
	out := &lockedWriter{w: w, log: h.log}
	in := newStdinGuard(ctx, r, out, maxLine, h.log)
	// The guard already bounds lines; the SDK's own limit stays as a backstop.
	defer s.end()
	return s.server.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: maxLine + 16})
}

// Connect opens a session to the hub over an in-memory transport and
// returns the client side: the chat loop uses it, so that it sees exactly
// what an external client sees. The session belongs to ctx's principal
// (WithPrincipal; the chat API's caller), within its toolsets.
func (h *Hub) Connect(ctx context.Context, toolset string, client *mcp.Client) (*mcp.ClientSession, error) {
	p := PrincipalFrom(ctx)
	toolset, err := h.toolsetFor(p, toolset)
	if err != nil {
		return nil, err
	}
	s, err := h.NewSession(toolset)
	if err != nil {
		return nil, err
	}
	// The chat re-lists before each model call, after a call's result:
	// that result must not wait for it.
	s.notice.relistWait = 0
	s.principal = p
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.connect(ctx, st); err != nil {
		return nil, fmt.Errorf("connect to hub: %w", err)
	}
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		return nil, fmt.Errorf("connect to hub: %w", err)
	}
	return cs, nil
}

func (h *Hub) maxRequestBytes() int64 {
	if h.Config().MaxRequestBytes > 0 {
		return h.Config().MaxRequestBytes
	}
	return DefaultMaxRequestBytes
}

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
//   - a POST without Mcp-Session-Id gets a fresh Session with its own
//     server, so loaded tools never leak between sessions, but only when
//     its body is an initialize request, and only while fewer than
//     max_sessions are open (503 with Retry-After otherwise); an HTTP
//     session ends when the client deletes it or after
//     session_idle_timeout without a request;
//   - the SDK's plain-text refusals become JSON-RPC errors (jsonRPCErrors);
//   - an answer that is complete at its first flush leaves in one write
//     (answerInOneWrite); one that streams is streamed.
func (h *Hub) HTTPHandler(extra map[string]http.Handler) http.Handler {
	// A request with a session id is routed by the SDK to its session; the
	// server returned for it is only asked which protocol versions it
	// speaks. It also answers a request without a session id that is not
	// an initialize, in a session the SDK ends at once.
	versions := mcp.NewServer(&mcp.Implementation{Name: "mcp-hub", Version: version.Version},
		&mcp.ServerOptions{SupportedProtocolVersions: supportedVersions()})
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
		if s, ok := r.Context().Value(sessionKey{}).(*Session); ok {
			return s.server
		}
		return versions
	}, &mcp.StreamableHTTPOptions{
		Logger:              h.sdkLog,
		SessionTimeout:      h.Config().SessionTimeout(),
		MaxRequestBodyBytes: h.maxRequestBytes(),
	})
	mcpHandler := func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			// With a session store, a session another replica made is
			// restored here first (restore.go).
			if h.prepareSession(w, r, id, stream) {
				stream.ServeHTTP(w, r)
			}
			return
		}
		if r.Method != http.MethodPost {
			stream.ServeHTTP(w, r)
			return
		}
		kind, ok := h.readFirstRequest(w, r)
		switch {
		case !ok:
			return
		case kind == batchRequest:
			// The SDK would take an initialize in a batch, in a session
			// of the shared server.
			http.Error(w, "Bad Request: no Mcp-Session-Id: a session starts with an initialize request alone, not in a batch", http.StatusBadRequest)
			return
		case kind == otherRequest:
			stream.ServeHTTP(w, r)
			return
		case !h.slots.take(h.Config().SessionLimit()):
			h.refuseSession(w)
			return
		}
		s := h.newHTTPSession(w, r)
		if s == nil {
			h.slots.release()
			return
		}
		h.storeLink.attach(s, s.toolsetName, principalID(r))
		stream.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
		h.holdSlot(s)
	}
	mux := http.NewServeMux()
	mux.Handle("/healthz", h.guardOrigin(http.HandlerFunc(h.serveHealth)))
	mcpAll := h.guard(h.jsonRPCErrors(answerInOneWrite(http.HandlerFunc(mcpHandler))))
	mux.Handle("/mcp", mcpAll)
	mux.Handle("/mcp/{toolset}", mcpAll)
	h.mountGateway(mux)
	for path, handler := range extra {
		mux.Handle(path, h.guard(handler))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" { // a probe is not work
			h.active()
		}
		mux.ServeHTTP(w, r)
	})
}

func (h *Hub) active() { h.lastActive.Store(time.Now().UnixNano()) }

// LastActivity is when the HTTP hub last had work: a request came (health
// checks aside), a session ended, or (NewHTTPServer) a connection closed.
// Zero before any.
func (h *Hub) LastActivity() time.Time {
	if ns := h.lastActive.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// holdSlot keeps s's session slot until its SDK session ends (the same
// goroutine forgets the session); a session that the SDK did not keep
// (the initialize failed) gives it back now.
func (h *Hub) holdSlot(s *Session) {
	for ss := range s.server.Sessions() {
		s.watch(ss, func() {
			h.storeLink.forget(ss.ID())
			h.slots.release()
			h.active()
		})
		return
	}
	h.slots.release()
}

// guard applies the Host and Origin checks, then auth (admit).
func (h *Hub) guard(next http.Handler) http.Handler {
	return h.guardOrigin(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.admit(w, r, next)
	}))
}

// guardOrigin refuses DNS-rebinding requests: on a loopback listener the
// Host must be loopback too (the SDK checks this for /mcp; the other
// handlers need it as much), and a browser Origin must be loopback or
// allowed.
func (h *Hub) guardOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
			if lh, _, err := net.SplitHostPort(local.String()); err == nil && isLoopbackHost(lh) && !isLoopbackHost(hostOnly(r.Host)) {
				http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
				return
			}
		}
		if origin := r.Header.Get("Origin"); origin != "" && !h.originAllowed(origin) && !sameOrigin(r, origin) {
			http.Error(w, fmt.Sprintf("Forbidden: origin %q is not allowed (add it to auth.allowed_origins)", origin), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (h *Hub) originAllowed(origin string) bool {
	if slices.Contains(h.Config().Auth.AllowedOrigins, origin) || slices.Contains(h.Config().Auth.AllowedOrigins, "*") {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil {
		return false
	}
	return isLoopbackHost(u.Hostname())
}

// hostOnly strips the port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
	Config ConfigStatus `json:"config"`
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
}

// Health reports the hub's state.
func (h *Hub) Health() Health {
	out := Health{Status: "ok", Tools: len(h.Catalog().Tools), Sessions: len(h.sessionList()), HTTPSessions: h.slots.Open(), Goroutines: runtime.NumGoroutine(), Config: h.ConfigStatus()}
	rt := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(rt)
	if rt[0].Value.Kind() == metrics.KindUint64 && rt[1].Value.Kind() == metrics.KindUint64 {
		out.HeapLiveBytes, out.GCCycles = rt[0].Value.Uint64(), rt[1].Value.Uint64()
	}
	if out.SessionStore = h.storeLink.state(); out.SessionStore == "unreachable" {
		out.Status = "degraded"
	}
	for _, st := range h.Upstreams() {
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
		})
	}
	return out
}

// serveHealth answers /healthz. Only a principal that the guard would let
// through to /mcp, /metrics and /ui (a verified credential, then the same
// authorization decision: forbidden) sees the details; anyone else gets
// only the overall status: server names, states and last errors are for
// those allowed to call them.
func (h *Hub) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	health := h.Health()
	if !h.admitted(r) {
		json.NewEncoder(w).Encode(struct {
			Status string `json:"status"`
		}{health.Status})
		return
	}
	json.NewEncoder(w).Encode(health)
}

// admitted reports whether admit would let r through, rate limits aside:
// its credential verifies and its principal is not forbidden.
func (h *Hub) admitted(r *http.Request) bool {
	a := h.authn()
	p, err := a.principal(r)
	if err != nil {
		return false
	}
	_, _, denied := h.forbidden(a, p, r)
	return !denied
}

// FirstToolsList is what a new client session of the toolset receives on
// its first tools/list, one JSON definition per tool, as the session's
// server marshals it: the toolset's view of the catalog, since a new
// session has loaded nothing. Token accounting counts these.
func (h *Hub) FirstToolsList(toolset string) ([]json.RawMessage, error) {
	ts, err := h.Toolset(toolset)
	if err != nil {
		return nil, err
	}
	tools := h.Catalog().view(h, ts).listed // every page
	defs := make([]json.RawMessage, len(tools))
	for i, def := range tools {
		if defs[i], err = json.Marshal(def); err != nil {
			return nil, err
		}
	}
	return defs, nil
}

// AllToolDefinitions are the definitions of every catalog tool: what a
// plain aggregator (discovery off) would list.
func (h *Hub) AllToolDefinitions() ([]json.RawMessage, error) {
	var defs []json.RawMessage
	for _, t := range h.Catalog().Tools {
		b, err := json.Marshal(t.Def)
		if err != nil {
			return nil, err
		}
		defs = append(defs, b)
	}
	return defs, nil
}
