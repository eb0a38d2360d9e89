package chatloop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestDecodeChatFeatures: the settings of templates, tool_result_format,
// history, approve and preselect decode, and every mistake is an error
// naming the line and the fix.
func TestDecodeChatFeatures(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.tmpl"), []byte("{{len .Tools}} tools"), 0o644); err != nil {
		t.Fatal(err)
	}
	decode := func(src string) (*Config, error) {
		var root struct {
			Providers yaml.Node `yaml:"providers"`
			Models    yaml.Node `yaml:"models"`
			Chat      yaml.Node `yaml:"chat"`
			Templates yaml.Node `yaml:"templates"`
		}
		if err := yaml.Unmarshal([]byte(src), &root); err != nil {
			t.Fatal(err)
		}
		return Decode(Sections{Providers: &root.Providers, Models: &root.Models, Chat: &root.Chat, Templates: &root.Templates, Dir: dir})
	}
	const head = "providers:\n  p: {type: ollama}\nmodels:\n  m: {provider: p, template: t}\n"
	cfg, err := decode(head + `templates:
  t: {file: ok.tmpl}
chat:
  tool_result_format: name_args_result
  history: {max_tokens: 1000, max_turns: 3}
  approve: always
  approve_tools: [a, "b*"]
  preselect: {top_k: 4, always: [x]}
`)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "format", cfg.Chat.ToolResultFormat, ResultWithCall)
	eq(t, "history", cfg.Chat.History, HistoryConfig{MaxTokens: 1000, MaxTurns: 3})
	eq(t, "approve", cfg.Chat.Approve, ApproveAlways)
	eq(t, "top_k", cfg.Chat.Preselect.TopK, 4)
	if got, err := cfg.Templates["t"].Render(TemplateData{Tools: make([]TemplateTool, 2)}); err != nil || got != "2 tools" {
		t.Errorf("render = %q, %v", got, err)
	}

	bad := []struct{ src, want string }{
		{"chat:\n  tool_result_format: fancy\n", `chat.tool_result_format: unknown format "fancy"; use result, name_result, name_args_result`},
		{"chat:\n  history: {max_tokenz: 5}\n", `line 6: chat.history: unknown key "max_tokenz"; valid keys: max_tokens, max_turns`},
		{"chat:\n  history: {max_tokens: -5}\n", "chat.history: max_tokens and max_turns must be positive"},
		{"chat:\n  approve: sometimes\n", `chat.approve: unknown level "sometimes"; use off, on_miss, always`},
		{"chat:\n  preselect: {top_k: 1000}\n", "chat.preselect.top_k must be between 1 and 100"},
		{"chat:\n  preselect: {topk: 3}\n", `chat.preselect: unknown key "topk"`},
		{"templates:\n  t: {file: missing.tmpl}\n", "templates.t: open "},
		{"templates:\n  t: {file: ok.tmpl, text: hi}\n", "templates.t: set exactly one of file: or text:"},
		{"templates:\n  other: hi\n", `models.m: unknown template "t"; templates: other`},
		{"templates:\n  t: \"{{.Tools\"\n", "hub.yaml:"},
	}
	for _, b := range bad {
		_, err := decode(head + b.src)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: error %v, want it to contain %q", b.src, err, b.want)
		}
	}
}
