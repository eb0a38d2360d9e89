package gateway

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/hub"
)

// Requests of the 2026-07-28 era (docs/stateless-mcp.md) carry no session:
// each stands alone and may land on any replica. The gateway serves them
// with go-sdk's stateless handler, in the hub's shared modern Session of
// the request's toolset and principal (hub.Hub.NewModernSession), and keeps
// nothing of the client between requests: no slot, no store record.

// modernMetaKey is the _meta key that makes a request one of the modern
// era (it carries the request's protocol version), quoted as it stands in
// a request body.
const modernMetaKey = `"` + mcp.MetaKeyProtocolVersion + `"`

// modernHTTPHandler serves modern requests: go-sdk's stateless handler,
// which connects the server of the Session serveModern put in the
// request's context for the one request, and validates the era's headers
// (MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*). A request's
// cancellation cancels its handler (and so the upstream call): the POST is
// the whole request in this era.
func (g *Gateway) modernHTTPHandler() *mcp.StreamableHTTPHandler {
	return mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		if s, ok := r.Context().Value(sessionKey{}).(*hub.Session); ok {
			return s.Server()
		}
		return nil
	}, &mcp.StreamableHTTPOptions{
		Stateless:                    true,
		Logger:                       g.hub.SDKLogger(),
		MaxRequestBodyBytes:          g.Config().RequestLimit(),
		PropagateRequestCancellation: true,
	})
}

// modernHeader reports whether r is a modern request by its
// MCP-Protocol-Version header, with protocol.modern on. A request with an
// Mcp-Session-Id belongs to a legacy session.
func (g *Gateway) modernHeader(r *http.Request) bool {
	return g.Config().Protocol.ModernEnabled() && r.Header.Get("Mcp-Session-Id") == "" &&
		r.Header.Get("Mcp-Protocol-Version") >= hub.ModernProtocol
}

// serveModern serves one modern request in the shared modern Session of
// its toolset (the path's, or the principal's default) and principal:
// 403 for a toolset the principal may not use, 404 for an unknown one,
// 503 past max_sessions.
func (g *Gateway) serveModern(w http.ResponseWriter, r *http.Request, stream http.Handler) {
	p := hub.PrincipalFrom(r.Context())
	ts, err := g.hub.ToolsetFor(p, r.PathValue("toolset"))
	if err != nil {
		http.Error(w, "Forbidden: "+err.Error(), http.StatusForbidden)
		return
	}
	if p == nil {
		p = anonymous // no auth configured
	}
	cfg := g.Config()
	s, ok, err := g.modern.get(modernKey{ts, p.Key()}, &g.slots, cfg.SessionLimit(), cfg.SessionTimeout(), func() (*hub.Session, error) {
		return g.hub.NewModernSession(hub.SessionOptions{Toolset: ts, Principal: p})
	})
	switch {
	case err != nil:
		http.Error(w, g.redact.String(err.Error()), http.StatusNotFound)
		return
	case !ok:
		g.refuseSession(w)
		return
	}
	stream.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
}

// modernSessions are the shared modern Sessions, one per toolset and
// principal. Each holds a session slot (sessionSlots) while it lives, so
// that max_sessions counts the sessions of both eras together. A Session
// no request has used for session_idle_timeout, and that holds no listen
// stream, is ended when another is made, or when a legacy session wants
// its slot (Gateway.takeSessionSlot); past max_sessions a new key is
// refused (503), as a legacy session would be.
type modernSessions struct {
	mu sync.Mutex
	m  map[modernKey]*modernEntry
}

type modernKey struct{ toolset, principal string }

type modernEntry struct {
	s        *hub.Session
	lastUsed time.Time
}

// get returns the shared modern Session of key, made with make in a slot
// of slots when there is none; ok is false when there is none and limit
// sessions of either era are open.
func (ms *modernSessions) get(key modernKey, slots *sessionSlots, limit int, idle time.Duration, make func() (*hub.Session, error)) (s *hub.Session, ok bool, err error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if e, found := ms.m[key]; found {
		e.lastUsed = time.Now()
		return e.s, true, nil
	}
	ms.evictIdleLocked(idle, slots)
	if !slots.take(limit) {
		return nil, false, nil
	}
	s, err = make()
	if err != nil {
		slots.release()
		return nil, true, err
	}
	if ms.m == nil {
		ms.m = map[modernKey]*modernEntry{}
	}
	ms.m[key] = &modernEntry{s: s, lastUsed: time.Now()}
	return s, true, nil
}

// evictIdle ends the Sessions no request has used for idle and that hold
// no listen stream, giving their slots back to slots, and reports how
// many it ended.
func (ms *modernSessions) evictIdle(idle time.Duration, slots *sessionSlots) int {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	return ms.evictIdleLocked(idle, slots)
}

func (ms *modernSessions) evictIdleLocked(idle time.Duration, slots *sessionSlots) int {
	n := 0
	now := time.Now()
	for k, e := range ms.m {
		if idle > 0 && now.Sub(e.lastUsed) > idle && !e.s.Busy() {
			delete(ms.m, k)
			go e.s.End()
			slots.release()
			n++
		}
	}
	return n
}

// closeAll ends every shared modern Session (the gateway is closing).
func (ms *modernSessions) closeAll() {
	ms.mu.Lock()
	all := ms.m
	ms.m = nil
	ms.mu.Unlock()
	for _, e := range all {
		e.s.End()
	}
}

// takeSessionSlot takes a slot for a new legacy session (a new or a
// restored one), ending idle modern Sessions to free one when all are
// taken: max_sessions is one count for both eras.
func (g *Gateway) takeSessionSlot() bool {
	cfg := g.Config()
	if g.slots.take(cfg.SessionLimit()) {
		return true
	}
	return g.modern.evictIdle(cfg.SessionTimeout(), &g.slots) > 0 && g.slots.take(cfg.SessionLimit())
}
