package hub

import (
	"context"
	"net/http"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// modernMetaKey is the _meta key that makes a request one of the modern
// era (it carries the request's protocol version).
const modernMetaKey = `"io.modelcontextprotocol/protocolVersion"`

// modernHTTPHandler serves modern requests over streamable HTTP: go-sdk's
// stateless handler, which connects the request's shared modern Session's
// server (put in the request's context by serveModern) for the one request
// and validates the era's headers (MCP-Protocol-Version, Mcp-Method,
// Mcp-Name). A request's cancellation cancels its handler (and so the
// upstream call), since the POST is the whole request in this era.
func (h *Hub) modernHTTPHandler() *mcp.StreamableHTTPHandler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s, ok := r.Context().Value(sessionKey{}).(*Session); ok {
			return s.server
		}
		return nil
	}, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       h.sdkLog,
		MaxRequestBodyBytes:          h.maxRequestBytes(),
		PropagateRequestCancellation: true,
	})
}

// modernHeader reports whether r is a modern request by its
// MCP-Protocol-Version header, with protocol.modern on. A request with an
// Mcp-Session-Id belongs to a legacy session.
func (h *Hub) modernHeader(r *http.Request) bool {
	return h.Config().Protocol.ModernEnabled() && r.Header.Get("Mcp-Session-Id") == "" &&
		r.Header.Get("Mcp-Protocol-Version") >= protocolModern
}

// serveModern serves one modern request in the shared modern Session of
// its toolset (the path's, or the principal's default) and principal:
// 403 for a toolset the principal may not use, 404 for an unknown one,
// 503 past max_sessions.
func (h *Hub) serveModern(w http.ResponseWriter, r *http.Request, stream http.Handler) {
	p := PrincipalFrom(r.Context())
	ts, err := h.toolsetFor(p, r.PathValue("toolset"))
	if err != nil {
		http.Error(w, "Forbidden: "+err.Error(), http.StatusForbidden)
		return
	}
	if p == nil {
		p = anonymous // no auth configured
	}
	cfg := h.Config()
	s, ok, err := h.modern.get(modernKey{ts, p.Key()}, cfg.SessionLimit(), cfg.SessionTimeout(), func() (*Session, error) {
		return h.newModernSession(ts, p)
	})
	switch {
	case err != nil:
		http.Error(w, h.redact.String(err.Error()), http.StatusNotFound)
		return
	case !ok:
		h.refuseSession(w)
		return
	}
	stream.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
}
