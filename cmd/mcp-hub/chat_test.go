package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// chatScript is a local OpenAI-compatible endpoint that plays a model
// solving "what is 6*7?" through the hub: search_tools when calc is not
// loaded, then calc__evaluate, then the answer built from the tool result.
// It records the tools offered in each request.
type chatScript struct {
	mu      sync.Mutex
	offered [][]string
}

func (s *chatScript) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, 400)
		return
	}
	var tools []string
	for _, t := range req.Tools {
		tools = append(tools, t.Function.Name)
	}
	s.mu.Lock()
	s.offered = append(s.offered, tools)
	s.mu.Unlock()

	last := req.Messages[len(req.Messages)-1]
	msg := map[string]any{"role": "assistant", "content": nil}
	toolCall := func(name, args string) {
		msg["tool_calls"] = []any{map[string]any{"id": fmt.Sprintf("call_%d", len(req.Messages)), "type": "function",
			"function": map[string]any{"name": name, "arguments": args}}}
	}
	switch {
	case last.Role == "tool" && strings.Contains(fmt.Sprint(last.Content), "42"):
		msg["content"] = "The answer is 42."
	case slices.Contains(tools, "calc__evaluate"):
		toolCall("calc__evaluate", `{"expression":"6*7"}`)
	case slices.Contains(tools, "search_tools") && last.Role == "user":
		toolCall("search_tools", `{"query":"evaluate arithmetic expression calculator"}`)
	default:
		msg["content"] = fmt.Sprintf("stuck: last message %s %v", last.Role, last.Content)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": "stop"}},
		"usage":   map[string]any{"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
	})
}

// TestChatOneShotBundledConfig is acceptance 3: `mcp-hub chat -p` against
// the bundled hub.yaml (built-in servers only, so it works from a clean
// clone) and a scripted local provider reached through the ollama
// provider's ${OLLAMA_BASE_URL}.
func TestChatOneShotBundledConfig(t *testing.T) {
	script := &chatScript{}
	srv := httptest.NewServer(script)
	defer srv.Close()
	const path = "../../hub.yaml"
	t.Setenv("OLLAMA_BASE_URL", srv.URL+"/v1")
	t.Setenv("MCP_HUB_MODEL", "local")
	t.Setenv("MCP_HUB_NOTES_FILE", filepath.Join(t.TempDir(), "notes.json"))

	var stdout, stderr strings.Builder
	code := run([]string{"mcp-hub", "--config", path, "chat", "-p", "What is 6*7?", "--stats"}, io.NopCloser(strings.NewReader("")), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
	}
	if got := stdout.String(); got != "The answer is 42.\n" {
		t.Errorf("stdout = %q, want the answer only", got)
	}
	for _, want := range []string{"[tool] search_tools", "[tool] calc__evaluate", "model calls: 3", "searches: 1, tools discovered:"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	script.mu.Lock()
	defer script.mu.Unlock()
	if len(script.offered) != 3 {
		t.Fatalf("provider got %d requests, want 3", len(script.offered))
	}
	if slices.Contains(script.offered[0], "calc__evaluate") || !slices.Contains(script.offered[0], "search_tools") {
		t.Errorf("round 1 tools = %v, want search_tools and no calc__evaluate (calc is deferred)", script.offered[0])
	}
	if !slices.Contains(script.offered[1], "calc__evaluate") {
		t.Errorf("round 2 tools = %v, want calc__evaluate loaded by the search", script.offered[1])
	}
}

// TestChatCLIErrors checks the one-line failures that need no provider.
func TestChatCLIErrors(t *testing.T) {
	const path = "../../hub.yaml"
	t.Setenv("MCP_HUB_NOTES_FILE", filepath.Join(t.TempDir(), "notes.json"))
	t.Setenv("ANTHROPIC_API_KEY", "")
	cases := []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"unknown model", []string{"chat", "-p", "hi", "--model", "nope"}, exitConfig, `unknown model "nope"; configured models: claude, gpt, local, openrouter`},
		{"missing key", []string{"chat", "-p", "hi", "--model", "claude"}, exitConfig, "provider anthropic has no api_key; set api_key: ${ANTHROPIC_API_KEY}"},
		{"stray argument", []string{"chat", "hello"}, exitConfig, `unexpected argument "hello"`},
		{"unreachable endpoint", []string{"chat", "-p", "hi", "--model", "local"}, 1, "provider ollama, model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// A port nothing listens on, for the unreachable case.
			t.Setenv("OLLAMA_BASE_URL", "http://127.0.0.1:1/v1")
			var stdout, stderr strings.Builder
			code := run(append([]string{"mcp-hub", "--config", path}, tc.args...), io.NopCloser(strings.NewReader("")), &stdout, &stderr)
			if code != tc.wantCode {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.wantCode, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing on failure", stdout.String())
			}
		})
	}
}

func TestModelsCommand(t *testing.T) {
	const path = "../../hub.yaml"
	t.Setenv("OPENAI_API_KEY", "sk-test-secret")
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENROUTER_API_KEY", "")
	var stdout, stderr strings.Builder
	code := run([]string{"mcp-hub", "--config", path, "models"}, io.NopCloser(strings.NewReader("")), &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"MODEL", "local", "claude-sonnet-4-5",
		"warning: provider anthropic has no api_key; set api_key: ${ANTHROPIC_API_KEY} under providers.anthropic and export ANTHROPIC_API_KEY",
		"warning: provider openrouter has no api_key",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("models output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "provider openai has no") || strings.Contains(out, "provider ollama has no") {
		t.Errorf("models output flags a provider that is fine:\n%s", out)
	}
	if strings.Contains(out+stderr.String(), "sk-test-secret") {
		t.Errorf("models printed an API key:\n%s", out)
	}
}
