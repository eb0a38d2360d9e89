//go:build linux

package e2e

// Claude Code as a real client, offline: ANTHROPIC_BASE_URL points it at a
// local stand-in for the Anthropic Messages API, defined here too.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// claudeCode is `claude -p` (npm @anthropic-ai/claude-code) with its
// default settings.
var claudeCode = claudeCodeWith()

// claudeCodeWith is Claude Code run with settings (NAME=value environment
// variables): its tool search forced on, say, or the new protocol era on
// stdio. The loaded tool must be on the next model call under each.
func claudeCodeWith(settings ...string) realClient {
	return realClient{
		name:     "Claude Code",
		settings: strings.Join(settings, " "),
		env:      "MCP_HUB_CLAUDE",
		prefix:   "mcp__hub__",
		api:      anthropicMessages,
		next:     listedAlways,
		version: func(cmd []string) string {
			out, _ := exec.Command(cmd[0], "--version").Output()
			v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
			return v
		},
		run: func(ctx context.Context, bin []string, home, modelURL string, hub hubServer, prompt string) (string, error) {
			return runClaudeCode(ctx, bin, home, modelURL, hub, prompt, settings)
		},
	}
}

func runClaudeCode(ctx context.Context, bin []string, home, modelURL string, hub hubServer, prompt string, settings []string) (string, error) {
	server := map[string]any{"type": "http", "url": hub.url}
	if hub.url == "" {
		server = map[string]any{"type": "stdio", "command": hub.command[0], "args": hub.command[1:], "env": hub.env}
	}
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"hub": server}})
	cfgPath := filepath.Join(home, "mcp.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin[0], "-p", prompt,
		"--mcp-config", cfgPath, "--strict-mcp-config",
		// --dangerously-skip-permissions is refused as root; this allows
		// every tool of the server named hub.
		"--allowedTools", "mcp__hub",
		"--output-format", "text")
	cmd.Dir = home
	cmd.Env = []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"ANTHROPIC_BASE_URL=" + modelURL,
		"ANTHROPIC_API_KEY=test-key",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		// -p connects MCP servers in the background by default, and its
		// first model call may go out before the hub is connected.
		"MCP_CONNECTION_NONBLOCKING=false",
	}
	cmd.Env = append(cmd.Env, settings...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("claude: %w\nstderr: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

// anthropicMessages serves POST /v1/messages (JSON or SSE, as the request
// asks) and /v1/messages/count_tokens in the real wire format.
func anthropicMessages(t *testing.T, script scriptedModel) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/messages/count_tokens", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":100}`)
	})
	mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
		var req anthropicRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, err.Error())
			return
		}
		move := script.move(req.view())
		blocks := []map[string]any{}
		stop := "end_turn"
		if move.text != "" {
			blocks = append(blocks, map[string]any{"type": "text", "text": move.text})
		}
		if c := move.call; c != nil {
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": c.args})
			stop = "tool_use"
		}
		msg := map[string]any{
			"id": "msg_scripted", "type": "message", "role": "assistant", "model": req.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 10},
		}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(msg)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(name string, data any) {
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		}
		start := map[string]any{}
		for k, v := range msg {
			start[k] = v
		}
		start["content"], start["stop_reason"] = []any{}, nil
		start["usage"] = map[string]any{"input_tokens": 100, "output_tokens": 1}
		event("message_start", map[string]any{"type": "message_start", "message": start})
		for i, b := range blocks {
			switch b["type"] {
			case "text":
				event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
				event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
			case "tool_use":
				event("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}})
				event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(b["input"].(json.RawMessage))}})
			}
			event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
		}
		event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 10}})
		event("message_stop", map[string]any{"type": "message_stop"})
	})
	return mux
}

// anthropicRequest is the part of a Messages request the script reads.
type anthropicRequest struct {
	Model    string          `json:"model"`
	Stream   bool            `json:"stream"`
	System   json.RawMessage `json:"system"` // a string or text blocks
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or blocks
	} `json:"messages"`
	Tools []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		// DeferLoading marks a tool sent by name only, its schema left to
		// the client's own tool search: not offered to the model.
		DeferLoading bool `json:"defer_loading"`
	} `json:"tools"`
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or blocks
	// A tool_reference block names a deferred tool (ToolName); Claude Code
	// sends one inside a tool_addition block (Tool).
	ToolName string `json:"tool_name"`
	Tool     *struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tool"`
}

// referenced is the deferred tool a block brings into the model's context,
// if any: the Messages API loads a defer_loading tool's definition where a
// tool_reference names it.
func (b anthropicBlock) referenced() string {
	switch {
	case b.Type == "tool_reference":
		return b.ToolName
	case b.Type == "tool_addition" && b.Tool != nil && b.Tool.Type == "tool_reference":
		return b.Tool.Name
	}
	return ""
}

func anthropicBlocks(raw json.RawMessage) []anthropicBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []anthropicBlock{{Type: "text", Text: s}}
	}
	var blocks []anthropicBlock
	json.Unmarshal(raw, &blocks)
	return blocks
}

func (r *anthropicRequest) view() modelView {
	var v modelView
	// A tool is offered when the model has its definition: sent whole, or
	// sent with defer_loading and named by a tool_reference (Claude Code
	// 2.1.3xx does that for MCP tools marked alwaysLoad that arrive
	// mid-turn). A deferred tool nothing references is a name only, behind
	// the client's own ToolSearch.
	referenced := map[string]bool{}
	for _, m := range r.Messages {
		for _, b := range anthropicBlocks(m.Content) {
			if name := b.referenced(); name != "" {
				referenced[name] = true
			}
			for _, c := range anthropicBlocks(b.Content) {
				if name := c.referenced(); name != "" {
					referenced[name] = true
				}
			}
		}
	}
	v.descriptions = map[string]string{}
	for _, t := range r.Tools {
		if !t.DeferLoading || referenced[t.Name] {
			v.tools = append(v.tools, t.Name)
			v.descriptions[t.Name] = t.Description
		} else {
			v.deferred = append(v.deferred, t.Name)
		}
	}
	// The system prompt, and the "system" messages Claude Code 2.1.3xx
	// adds (its environment, and the MCP servers' instructions).
	for _, b := range anthropicBlocks(r.System) {
		v.system += b.Text + "\n"
	}
	for _, m := range r.Messages {
		if m.Role == "system" {
			for _, b := range anthropicBlocks(m.Content) {
				v.system += b.Text + "\n"
			}
		}
	}
	names := map[string]string{} // tool_use id -> tool name
	for _, m := range r.Messages {
		for _, b := range anthropicBlocks(m.Content) {
			if b.Type == "tool_use" {
				names[b.ID] = b.Name
			}
		}
	}
	// Claude Code 2.1.3xx ends the messages with its environment as a
	// "system" message; the newest turn is the last message before it.
	msgs := r.Messages
	for len(msgs) > 0 && msgs[len(msgs)-1].Role == "system" {
		msgs = msgs[:len(msgs)-1]
	}
	if len(msgs) == 0 {
		return v
	}
	last := msgs[len(msgs)-1]
	if last.Role != "user" {
		return v
	}
	for _, b := range anthropicBlocks(last.Content) {
		switch b.Type {
		case "text":
			v.prompt += b.Text
		case "tool_result":
			var text strings.Builder
			var refs []string
			for _, c := range anthropicBlocks(b.Content) {
				text.WriteString(c.Text)
				if name := c.referenced(); name != "" {
					refs = append(refs, name)
				}
			}
			v.results = append(v.results, toolResult{tool: names[b.ToolUseID], text: text.String(), isError: b.IsError, refs: refs, id: b.ToolUseID})
		}
	}
	return v
}

// TestClaudeCodeSeesSearchTools checks what the model inside Claude Code
// knows when it has to find a tool the hub defers (issue 24): search_tools
// offered whole, not behind Claude Code's own ToolSearch, with the manifest
// of deferred servers in its description; the hub's instructions (use
// search_tools) in the system prompt; and none of the deferred tools among
// the names ToolSearch could find, so that the hub's ranking is the only
// way to them. Run as installed and with Claude Code's tool search forced on.
func TestClaudeCodeSeesSearchTools(t *testing.T) {
	bin := os.Getenv("MCP_HUB_CLAUDE")
	if bin == "" {
		t.Skip("MCP_HUB_CLAUDE is not set: run ./scripts/test.sh, which installs Claude Code into .cache/npm and sets it")
	}
	for _, settings := range [][]string{nil, {"ENABLE_TOOL_SEARCH=true"}} {
		t.Run(strings.Join(append([]string{"as installed"}, settings...)[min(len(settings), 1):], " "), func(t *testing.T) {
			hub := realClientHub(t, "stdio")
			// The model searches by the steps of a task (queries): Claude
			// Code passes them on, and each step's tools are loaded.
			script := &calcTurn{prefix: claudeCode.prefix, expr: "6 * 7", want: "42", start: time.Now(),
				search: `{"queries":["evaluate arithmetic expression calculator","save a note"]}`}
			model := httptest.NewServer(anthropicMessages(t, script))
			defer model.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			answer, err := runClaudeCode(ctx, []string{bin}, t.TempDir(), model.URL, hub, "What is 6 * 7? Use the calculator tool, and save a note of it.", settings)
			script.mu.Lock()
			defer script.mu.Unlock()
			if err != nil || !strings.Contains(answer, "The answer is 42.") || script.first == nil {
				t.Fatalf("turn: answer %q, err %v; model requests:\n  %s", answer, err, strings.Join(script.requests, "\n  "))
			}
			if after := script.afterSearch; after == nil || !slices.ContainsFunc(after.tools, func(n string) bool { return strings.HasPrefix(n, claudeCode.prefix+"notes__") }) {
				t.Errorf("the second step's tools (notes) are not offered after search_tools {queries}: %v", after)
			}
			v := script.first
			search := claudeCode.prefix + searchTool
			desc := v.descriptions[search]
			if !strings.Contains(desc, "Search for tools") || !strings.Contains(desc, "`queries` (one short query per step)") || !strings.Contains(desc, "- calc (") {
				t.Errorf("search_tools is offered without its description (with the steps of a task in queries) and manifest: %q", desc)
			}
			if !strings.Contains(v.system, "call search_tools with a plain-words query") || !strings.Contains(v.system, "- calc (") {
				t.Errorf("the hub's instructions and manifest are not in the system prompt or messages (%d characters)", len(v.system))
			}
			for _, name := range v.deferred {
				if strings.HasPrefix(name, claudeCode.prefix) {
					t.Errorf("%s is deferred behind Claude Code's own tool search", name)
				}
			}
			for _, name := range append(append([]string(nil), v.tools...), v.deferred...) {
				if strings.HasPrefix(name, claudeCode.prefix+"calc__") || strings.HasPrefix(name, claudeCode.prefix+"notes__") {
					t.Errorf("deferred hub tool %s is visible before search_tools loaded it", name)
				}
			}
			t.Logf("first agent request: %d tools offered (%v), %d deferred by Claude Code (%v), system prompt and messages %d characters",
				len(v.tools), v.tools, len(v.deferred), v.deferred, len(v.system))
		})
	}
}
