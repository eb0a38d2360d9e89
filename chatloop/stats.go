package chatloop

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Stats counts what one chat cost and did, across all its turns.
type Stats struct {
	ModelCalls   int   `json:"model_calls"`
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	ToolCalls    int   `json:"tool_calls"`
	ToolErrors   int   `json:"tool_errors"`
	// ToolCallsByTool and ToolCallsByServer count the tool actually run: a
	// call_tool call counts under the tool it named. The meta-tools count
	// under the server "_hub".
	ToolCallsByTool   map[string]int `json:"tool_calls_by_tool"`
	ToolCallsByServer map[string]int `json:"tool_calls_by_server"`
	Searches          int            `json:"searches"`
	// ToolsDiscovered counts tools that joined the session's tools/list
	// during the chat (loaded by search_tools).
	ToolsDiscovered int `json:"tools_discovered"`
	// Preselected counts the tools chat.preselect picked, over all turns.
	Preselected int `json:"preselected"`
	// HistoryTrimmed is what chat.history removed from the conversation.
	HistoryTrimmed HistoryTrim   `json:"history_trimmed"`
	WallTime       time.Duration `json:"-"`
}

// MarshalJSON writes WallTime as milliseconds, the unit scripts expect.
func (s Stats) MarshalJSON() ([]byte, error) {
	type plain Stats
	return json.Marshal(struct {
		plain
		WallTimeMS int64 `json:"wall_time_ms"`
	}{plain(s), s.WallTime.Milliseconds()})
}

func (s *Stats) recordTool(name, server string, isError bool) {
	if s.ToolCallsByTool == nil {
		s.ToolCallsByTool = map[string]int{}
		s.ToolCallsByServer = map[string]int{}
	}
	s.ToolCalls++
	s.ToolCallsByTool[name]++
	s.ToolCallsByServer[server]++
	if isError {
		s.ToolErrors++
	}
	if name == searchToolName {
		s.Searches++
	}
}

func (s Stats) clone() Stats {
	s.ToolCallsByTool = maps.Clone(s.ToolCallsByTool)
	s.ToolCallsByServer = maps.Clone(s.ToolCallsByServer)
	return s
}

// Write prints the stats for a human, one fact per line.
func (s Stats) Write(w io.Writer) {
	fmt.Fprintf(w, "model calls: %d (tokens in %d, out %d)\n", s.ModelCalls, s.InputTokens, s.OutputTokens)
	fmt.Fprintf(w, "tool calls: %d (%d errors)%s\n", s.ToolCalls, s.ToolErrors, countList(s.ToolCallsByTool))
	fmt.Fprintf(w, "by server:%s\n", countList(s.ToolCallsByServer))
	fmt.Fprintf(w, "searches: %d, tools discovered: %d\n", s.Searches, s.ToolsDiscovered)
	if s.Preselected > 0 {
		fmt.Fprintf(w, "tools preselected (chat.preselect): %d\n", s.Preselected)
	}
	if s.HistoryTrimmed.Messages > 0 {
		fmt.Fprintf(w, "history trimmed (chat.history): %s\n", s.HistoryTrimmed)
	}
	fmt.Fprintf(w, "wall time: %s\n", s.WallTime.Round(time.Millisecond))
}

func countList(m map[string]int) string {
	if len(m) == 0 {
		return ""
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, " %s=%d", k, m[k])
	}
	return b.String()
}
