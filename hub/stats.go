package hub

import (
	"maps"
	"time"
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

func (st *Stats) init() {
	st.CallsByTool = map[string]int{}
	st.CallsByServer = map[string]int{}
}

func (st Stats) clone() Stats {
	st.CallsByTool = maps.Clone(st.CallsByTool)
	st.CallsByServer = maps.Clone(st.CallsByServer)
	return st
}

func (s *Session) recordCall(t *Tool, took time.Duration, failed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.CallsByTool[t.Name]++
	s.stats.CallsByServer[t.Server]++
	s.stats.CallTime += took
	if failed {
		s.stats.Errors++
	}
}

func (s *Session) recordMetaCall(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.CallsByTool[name]++
	s.stats.CallsByServer[metaServer]++
}

func (s *Session) recordSearch() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Searches++
}

func (s *Session) recordDiscovered(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.ToolsDiscovered += n
}

func (s *Session) recordError() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Errors++
}
