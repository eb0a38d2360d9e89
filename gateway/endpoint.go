package gateway

import (
	"context"
	"net/http"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// mcpEndpoint serves /mcp and /mcp/<toolset> once the request is admitted
// (guard: Host and Origin, auth, rate limits) and its answers are wrapped
// (jsonRPCErrors, answerInOneWrite). It decides, in this order, who
// serves the request:
//
//  1. A request of the 2026-07-28 era by its headers (MCP-Protocol-Version
//     at 2026-07-28 or later and no Mcp-Session-Id, with protocol.modern
//     on) goes to the shared modern Session of its toolset and principal
//     (modern.go).
//  2. A request with an Mcp-Session-Id goes to that session, restored
//     first from the session store when another replica made it
//     (restore.go); the SDK answers 404 for an unknown one.
//  3. A GET or DELETE without a session id is the SDK's to refuse.
//  4. A POST without a session id is read (readFirstRequest) and goes by
//     its first message: a 2026-07-28 request to the modern Session (or,
//     with protocol.modern off, to the SDK, which refuses its version); a
//     batch is refused (400); a request other than initialize goes to the
//     SDK, which refuses it; an initialize takes a session slot (503 with
//     Retry-After past max_sessions) and gets a Session of its own with
//     its own SDK server, so loaded tools never leak between sessions.
type mcpEndpoint struct {
	g      *Gateway
	stream *mcp.StreamableHTTPHandler // legacy sessions, by Mcp-Session-Id
	modern http.Handler               // 2026-07-28 requests (modernHTTPHandler)
}

func (e *mcpEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g := e.g
	if g.modernHeader(r) {
		g.serveModern(w, r, e.modern)
		return
	}
	if id := r.Header.Get("Mcp-Session-Id"); id != "" {
		if g.prepareSession(w, r, id, e.stream) {
			e.stream.ServeHTTP(w, r)
		}
		return
	}
	if r.Method != http.MethodPost {
		e.stream.ServeHTTP(w, r)
		return
	}
	kind, ok := g.readFirstRequest(w, r)
	switch {
	case !ok:
		return
	case kind == modernRequest && g.Config().Protocol.ModernEnabled():
		g.serveModern(w, r, e.modern)
		return
	case kind == modernRequest, kind == otherRequest:
		e.stream.ServeHTTP(w, r)
		return
	case kind == batchRequest:
		// The SDK would take an initialize in a batch, in a session of
		// the shared server.
		http.Error(w, "Bad Request: no Mcp-Session-Id: a session starts with an initialize request alone, not in a batch", http.StatusBadRequest)
		return
	case !g.takeSessionSlot():
		g.refuseSession(w)
		return
	}
	e.newSession(w, r)
}

// newSession serves an initialize in a Session of its own, which holds
// its slot until its SDK session ends.
func (e *mcpEndpoint) newSession(w http.ResponseWriter, r *http.Request) {
	g := e.g
	s := g.newHTTPSession(w, r)
	if s == nil {
		g.slots.release()
		return
	}
	e.stream.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
	g.holdSlot(s)
}
