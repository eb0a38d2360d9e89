package hub

import "time"

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
