package hub

import (
	"context"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// SessionInfo describes an open client session (for the dashboard).
type SessionInfo struct {
	ID         int64     `json:"id"`
	MCPSession string    `json:"mcp_session,omitempty"` // the HTTP Mcp-Session-Id
	Principal  string    `json:"principal"`             // Principal.Key: namespaced by kind
	Kind       string    `json:"principal_kind"`
	Toolset    string    `json:"toolset,omitempty"`
	Client     string    `json:"client,omitempty"`
	Opened     time.Time `json:"opened"`
	Loaded     []string  `json:"loaded"` // deferred tools it has loaded, sorted
	Stats      Stats     `json:"stats"`
}

// Sessions describes the open sessions viewer may see, oldest first: all
// of them for a nil or unrestricted viewer; only its own for a principal
// restricted to some toolsets (auth.oauth.toolset_claim).
func (h *Hub) Sessions(viewer *Principal) []SessionInfo {
	var out []SessionInfo
	for _, s := range h.sessionList() {
		p := s.who()
		if viewer != nil && viewer.Restricted && p.ID != viewer.ID {
			continue
		}
		info := SessionInfo{ID: s.id, Principal: p.Key(), Kind: p.Kind, Toolset: s.toolsetName, Opened: s.opened, Stats: s.Stats()}
		if ss := s.serverSession(); ss != nil {
			info.MCPSession = ss.ID()
			if ip := ss.InitializeParams(); ip != nil && ip.ClientInfo != nil {
				info.Client = ip.ClientInfo.Name + " " + ip.ClientInfo.Version
			}
		}
		s.mu.Lock()
		info.Loaded = sortedKeys(s.loaded)
		s.mu.Unlock()
		out = append(out, info)
	}
	return out
}

// who is the session's principal: whoever opened it over HTTP, else local.
func (s *Session) who() *Principal {
	if s.principal != nil {
		return s.principal
	}
	return local
}

func (h *Hub) sessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// SessionCount is how many sessions are open (initialized and not ended).
func (h *Hub) SessionCount() int { return h.sessionCount() }

// ID is the session's number in this hub, unique while it runs.
func (s *Session) ID() int64 { return s.id }

// ToolsetName is the toolset the session was made for ("" for all tools).
func (s *Session) ToolsetName() string { return s.toolsetName }

// Principal is who the session belongs to: whoever opened it, else a
// local principal.
func (s *Session) Principal() *Principal { return s.who() }

// Opened is when the session was made.
func (s *Session) Opened() time.Time { return s.opened }

// ServerSession is the SDK session serving s, once the client has
// initialized; nil before.
func (s *Session) ServerSession() *mcp.ServerSession { return s.serverSession() }

// LoadedTools are the exposed names of the deferred tools s has loaded,
// sorted.
func (s *Session) LoadedTools() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sortedKeys(s.loaded)
}

// LoadTools loads into s the deferred tools named that it has not loaded
// yet, and that still exist and its toolset allows (tools loaded for it
// elsewhere: another replica). No call of s waits on the change: the SDK's
// debounced list_changed tells the client.
func (s *Session) LoadTools(names []string) {
	if len(names) == 0 {
		return
	}
	c := s.hub.Catalog()
	var tools []*Tool
	for _, name := range names {
		if t, ok := c.Tool(name); ok && t.Deferred && s.visible(t) && !s.isLoaded(name) {
			tools = append(tools, t)
		}
	}
	if len(tools) > 0 {
		s.load(context.Background(), nil, c, tools)
	}
}
