package chatloop

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcp-hub/mcp-hub/config"
)

// formatResults returns the history as the model should see it under
// format. The history itself keeps the bare results, so --json and the
// HTTP API return what the tools said, and a format change applies to the
// whole conversation.
func formatResults(history []Message, format string) []Message {
	if format == "" || format == config.ResultOnly {
		return history
	}
	calls := map[string]ToolCall{}
	out := slices.Clone(history)
	for i, m := range out {
		for _, c := range m.ToolCalls {
			calls[c.ID] = c
		}
		if m.Role != RoleTool {
			continue
		}
		results := slices.Clone(m.ToolResults)
		for j, r := range results {
			results[j] = formatResult(r, calls[r.CallID], format)
		}
		out[i].ToolResults = results
	}
	return out
}

func formatResult(r ToolResult, call ToolCall, format string) ToolResult {
	name, args := r.Name, call.Arguments
	if name == callToolName {
		// Show the tool call_tool ran, not the meta-tool.
		var a struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if json.Unmarshal(call.Arguments, &a) == nil && a.Name != "" {
			name, args = a.Name, a.Arguments
		}
	}
	head := name
	if format == config.ResultWithCall {
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		head = fmt.Sprintf("%s(%s)", name, args)
	}
	head += " → "
	parts := slices.Clone(r.Parts)
	if len(parts) > 0 && parts[0].Type == PartText {
		parts[0].Text = head + parts[0].Text
	} else {
		parts = append([]Part{{Type: PartText, Text: head}}, parts...)
	}
	r.Parts = parts
	return r
}
