//go:build linux

package e2e

// OpenAI's Codex CLI as a real client (npm @openai/codex, `codex exec`), with
// a custom model provider on 127.0.0.1 speaking the Responses API.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// codexCLI is `codex exec`, run by Node 22 through its npm entry point. It
// offers an MCP server's tools to the model as one Responses API namespace
// tool, "mcp__<server>", whose tools keep their own names; the script sees
// them as "mcp__hub__<tool>". It lists an MCP server's tools once, at start.
var codexCLI = realClient{
	name:   "Codex CLI",
	env:    "MCP_HUB_CODEX",
	node:   true,
	prefix: "mcp__hub__",
	api:    openAIResponses,
	next:   listedNever,
	version: func(cmd []string) string {
		out, _ := exec.Command(cmd[0], append(cmd[1:], "--version")...).Output()
		f := strings.Fields(string(out)) // "codex-cli 0.169.0"
		if len(f) == 0 {
			return "?"
		}
		return f[len(f)-1]
	},
	run: runCodex,
}

func runCodex(ctx context.Context, cmdline []string, home, modelURL string, hub hubServer, prompt string) (string, error) {
	codexHome := filepath.Join(home, ".codex")
	if err := os.MkdirAll(codexHome, 0o700); err != nil {
		return "", err
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "model = \"scripted\"\nmodel_provider = \"local\"\n\n")
	fmt.Fprintf(&cfg, "[model_providers.local]\nname = \"local\"\nbase_url = %s\nwire_api = \"responses\"\n\n", strconv.Quote(modelURL+"/v1"))
	fmt.Fprintf(&cfg, "[mcp_servers.hub]\n")
	if hub.url != "" {
		fmt.Fprintf(&cfg, "url = %s\n", strconv.Quote(hub.url))
	} else {
		fmt.Fprintf(&cfg, "command = %s\nargs = [", strconv.Quote(hub.command[0]))
		for i, a := range hub.command[1:] {
			if i > 0 {
				cfg.WriteString(", ")
			}
			cfg.WriteString(strconv.Quote(a))
		}
		cfg.WriteString("]\nenv = {")
		first := true
		for k, v := range hub.env {
			if !first {
				cfg.WriteString(", ")
			}
			first = false
			fmt.Fprintf(&cfg, "%s = %s", k, strconv.Quote(v))
		}
		cfg.WriteString("}\n")
	}
	// exec runs with approval policy "never": MCP tools must be approved
	// up front, or every call is refused. The first model call waits for
	// the server only when it is required, and then for its tool list
	// with "catalog"; otherwise it may go out without the hub's tools (a
	// hub built with -race is often that slow).
	cfg.WriteString("default_tools_approval_mode = \"approve\"\nrequired = true\nstartup_readiness = \"catalog\"\nstartup_timeout_sec = 60\n")
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg.String()), 0o600); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, cmdline[0], append(cmdline[1:], "exec", "--skip-git-repo-check", prompt)...)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "CODEX_HOME=" + codexHome, "PATH=" + os.Getenv("PATH")}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("codex: %w\nstderr: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

// openAIResponses serves POST /v1/responses in the Responses API's wire
// format (an SSE stream, or JSON when the request does not stream).
func openAIResponses(t *testing.T, script scriptedModel) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) {
		var req responsesRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, err.Error())
			return
		}
		view, namespaced := req.view()
		move := script.move(view)
		var item map[string]any
		if c := move.call; c != nil {
			item = map[string]any{"type": "function_call", "id": "fc_" + c.id, "call_id": c.id, "name": c.name, "arguments": string(c.args), "status": "completed"}
			if ns, ok := namespaced[c.name]; ok {
				item["namespace"], item["name"] = ns[0], ns[1]
			}
		} else {
			item = map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": move.text, "annotations": []any{}}}}
		}
		usage := map[string]any{"input_tokens": 100, "output_tokens": 10, "total_tokens": 110,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
		done := map[string]any{"id": "resp_1", "object": "response", "status": "completed", "model": req.Model, "output": []any{item}, "usage": usage}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(done)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(name string, data map[string]any) {
			data["type"] = name
			b, _ := json.Marshal(data)
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		}
		event("response.created", map[string]any{"response": map[string]any{"id": "resp_1", "object": "response", "status": "in_progress", "output": []any{}}})
		event("response.output_item.added", map[string]any{"output_index": 0, "item": item})
		if move.call == nil {
			event("response.output_text.delta", map[string]any{"output_index": 0, "content_index": 0, "item_id": "msg_1", "delta": move.text})
		}
		event("response.output_item.done", map[string]any{"output_index": 0, "item": item})
		event("response.completed", map[string]any{"response": done})
	})
	return mux
}

// responsesRequest is the part of a Responses API request the script reads.
type responsesRequest struct {
	Model  string `json:"model"`
	Stream bool   `json:"stream"`
	Input  []struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		CallID    string          `json:"call_id"`
		Namespace string          `json:"namespace"`
		Name      string          `json:"name"`
		Output    json.RawMessage `json:"output"` // a string or content parts
	} `json:"input"`
	Tools []struct {
		Type  string `json:"type"`
		Name  string `json:"name"`
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"` // a namespace's tools
	} `json:"tools"`
}

// responsesText is the text of a string or of content parts.
func responsesText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// view flattens namespace tools to "<namespace>__<tool>"; namespaced maps
// those names back to their namespace and tool.
func (r *responsesRequest) view() (v modelView, namespaced map[string][2]string) {
	namespaced = map[string][2]string{}
	for _, t := range r.Tools {
		switch t.Type {
		case "function":
			v.tools = append(v.tools, t.Name)
		case "namespace":
			for _, inner := range t.Tools {
				flat := t.Name + "__" + inner.Name
				v.tools = append(v.tools, flat)
				namespaced[flat] = [2]string{t.Name, inner.Name}
			}
		}
	}
	names := map[string]string{} // call_id -> flattened tool name
	last := -1                   // the newest user message
	for i, it := range r.Input {
		switch {
		case it.Type == "function_call" && it.Namespace != "":
			names[it.CallID] = it.Namespace + "__" + it.Name
		case it.Type == "function_call":
			names[it.CallID] = it.Name
		case it.Type == "message" && it.Role == "user":
			last = i
		}
	}
	for _, it := range r.Input[last+1:] {
		if it.Type == "function_call_output" {
			v.results = append(v.results, toolResult{tool: names[it.CallID], text: responsesText(it.Output)})
		}
	}
	if len(v.results) == 0 && last >= 0 {
		v.prompt = responsesText(r.Input[last].Content)
	}
	return v, namespaced
}
