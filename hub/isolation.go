package hub

import (
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Isolated servers. A stdio server with `isolation: principal` or
// `isolation: session` runs a process of its own per principal or per
// client session (upstream/isolated.go); the hub says whose process a
// session's requests use (IsolationKey) and whose calls what a principal's
// process sends may belong to (principalCaller). What a session's own
// process sends is the session's, as with an HTTP upstream's owned
// session.

// IsolationKey implements upstream.Isolatable: the session itself under
// `session`, its principal under `principal`. A modern session is shared
// by every modern request of a toolset and principal, with no client
// session behind it to own a process (and a process per request would
// start a server for every call): under `session` its requests use their
// principal's process, and what that process sends is attributed to one
// request, or refused, as under `principal`.
func (s *Session) IsolationKey(mode string) any {
	s.mu.Lock()
	modern := s.modernShared
	s.mu.Unlock()
	if mode == config.IsolationSession && !modern {
		return s
	}
	return upstream.PrincipalOwner(s.principalKey())
}

// principalKey tells the session's principal from every other.
func (s *Session) principalKey() string {
	if s.principal == nil {
		return local.Key()
	}
	return s.principal.Key()
}

// principalCaller finds the call that what principal p's process of
// server sent belongs to, among p's calls alone: those of p's sessions to
// server, by the router's notion of a client (call.client: a legacy
// session, or one modern request). When several clients of p are calling,
// it is ambiguous and refused. Outside any call it is p's only session's,
// if p has just one and it serves one client; otherwise ambiguous too:
// never a session of another principal.
func (h *Hub) principalCaller(server string, p upstream.PrincipalOwner) (s *Session, c *call, ambiguous bool) {
	r := &h.routes
	r.mu.Lock()
	var client any
	for cl := range r.calls[server] {
		if upstream.PrincipalOwner(cl.session.principalKey()) != p {
			continue
		}
		if client != nil && client != cl.client {
			r.mu.Unlock()
			return nil, nil, true
		}
		client, c = cl.client, cl
	}
	r.mu.Unlock()
	if c != nil {
		return c.session, c, false
	}
	sessions := h.sessionsOf(p)
	if len(sessions) == 1 && sessions[0].oneClient() {
		return sessions[0], nil, false
	}
	return nil, nil, true
}

// sessionsOf lists principal p's sessions.
func (h *Hub) sessionsOf(p upstream.PrincipalOwner) []*Session {
	var out []*Session
	for _, s := range h.sessionList() {
		if upstream.PrincipalOwner(s.principalKey()) == p {
			out = append(out, s)
		}
	}
	return out
}
