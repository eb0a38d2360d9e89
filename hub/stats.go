package hub

import (
	"context"
	"maps"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// Stats are one session's counters.
type Stats struct {
	Searches        int            `json:"searches"`
	ToolsDiscovered int            `json:"tools_discovered"`
	CallsByTool     map[string]int `json:"calls_by_tool"`
	CallsByServer   map[string]int `json:"calls_by_server"`
	Errors          int            `json:"errors"`
	CallTime        time.Duration  `json:"call_time_ns"`
}

func (st Stats) clone() Stats {
	st.CallsByTool = maps.Clone(st.CallsByTool)
	st.CallsByServer = maps.Clone(st.CallsByServer)
	return st
}

// initStats sets up the session's counters and the CallTrace that keeps
// them: the session's own subscriber to what its requests do.
func (s *Session) initStats() {
	s.stats.CallsByTool = map[string]int{}
	s.stats.CallsByServer = map[string]int{}
	s.statsTrace = CallTrace{
		MetaToolCall: func(_ context.Context, name string) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.stats.CallsByTool[name]++
			s.stats.CallsByServer[MetaServer]++
		},
		SearchDone: func(_ context.Context, loaded int) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.stats.Searches++
			s.stats.ToolsDiscovered += loaded
		},
		Refused: func(context.Context) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.stats.Errors++
		},
		UpstreamDone: func(_ context.Context, r *UpstreamRequest, res mcp.Result, err error) {
			if r.Tool == nil {
				return
			}
			took := time.Since(r.Start)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.stats.CallsByTool[r.Tool.Name]++
			s.stats.CallsByServer[r.Tool.Server]++
			s.stats.CallTime += took
			if err != nil || IsToolError(res) {
				s.stats.Errors++
			}
		},
	}
}
