package config

// The chat's sections (providers, models, chat, templates): decoded with
// the rest of the file, with their defaults, and every mistake reported
// with its line and key.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chatDoc parses a hub.yaml of the chat sections in src, with a server
// after them so that their line numbers are src's.
func chatDoc(t *testing.T, dir, src string) (*Config, error) {
	t.Helper()
	return parseConfig(filepath.Join(dir, "hub.yaml"), []byte(src+"servers:\n  s: {command: x}\n"))
}

func TestChatSections(t *testing.T) {
	full := `
providers:
  local: {type: ollama}
  oa: {type: openai, api_key: sk-x}
  router: {type: openai, base_url: "https://openrouter.ai/api/v1", api_key: k}
  claude: {type: Anthropic, api_key: k}
models:
  small: {provider: local}
  big: {provider: claude, model: claude-sonnet-4-5, system: be brief, temperature: 0.2, max_tokens: 1000}
chat:
  default_model: big
  max_rounds: 7
  parallel_tool_calls: false
`
	cfg, err := chatDoc(t, t.TempDir(), full)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, got, want any }{
		{"ollama base_url", cfg.Providers["local"].BaseURL, "http://localhost:11434/v1"},
		{"type lowercased", cfg.Providers["claude"].Type, ProviderAnthropic},
		{"model defaults to name", cfg.Models["small"].Model, "small"},
		{"temperature", *cfg.Models["big"].Temperature, 0.2},
		{"max_tokens", cfg.Models["big"].MaxTokens, 1000},
		{"max_rounds", cfg.Chat.MaxRounds, 7},
		{"parallel", *cfg.Chat.ParallelToolCalls, false},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}

	// Empty and absent sections: defaults.
	for _, src := range []string{"", "providers:\nmodels:\nchat:\ntemplates:\n"} {
		cfg, err := chatDoc(t, t.TempDir(), src)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		if cfg.Chat.MaxRounds != DefaultChatMaxRounds || !*cfg.Chat.ParallelToolCalls || len(cfg.Providers)+len(cfg.Models)+len(cfg.Templates) != 0 {
			t.Errorf("%q: chat = %+v, providers %v, models %v", src, cfg.Chat, cfg.Providers, cfg.Models)
		}
	}
}

func TestChatSectionErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown provider key", "providers:\n  a:\n    type: openai\n    apikey: x\n",
			[]string{`hub.yaml:4: providers.a: unknown key "apikey"; valid keys: type, base_url, api_key`}},
		{"unknown model key", "providers:\n  a: {type: ollama}\nmodels:\n  m: {provider: a, temp: 1}\n",
			[]string{`hub.yaml:4: models.m: unknown key "temp"`}},
		{"unknown chat key", "chat:\n  max_round: 3\n", []string{`hub.yaml:2: chat: unknown key "max_round"; valid keys: default_model, max_rounds, parallel_tool_calls`}},
		{"bad type", "providers:\n  a: {type: gemini}\n", []string{`hub.yaml:2: providers.a: unknown type "gemini"; use openai, anthropic or ollama`}},
		{"missing type", "providers:\n  a: {base_url: http://x}\n", []string{"providers.a: missing type"}},
		{"bad base_url", "providers:\n  a: {type: openai, base_url: localhost:1234}\n", []string{"is not an http(s) URL"}},
		{"unknown provider", "providers:\n  a: {type: ollama}\nmodels:\n  m: {provider: b}\n", []string{`hub.yaml:4: models.m: unknown provider "b"; configured providers: a`}},
		{"broken provider is still declared", "providers:\n  a: {type: nope}\nmodels:\n  m: {provider: a}\n", []string{`unknown type "nope"`}},
		{"missing provider", "models:\n  m: {model: x}\n", []string{"models.m: missing provider"}},
		{"unknown default", "providers:\n  a: {type: ollama}\nmodels:\n  m: {provider: a}\nchat: {default_model: x}\n", []string{`chat.default_model: unknown model "x"; configured models: m`}},
		{"wrong value type", "chat:\n  max_rounds: many\n", []string{"hub.yaml:2", "max_rounds"}},
		{"section not a mapping", "providers: [a, b]\n", []string{"hub.yaml:1: providers must be a mapping"}},
		{"all errors together", "providers:\n  a: {type: x}\n  b: {type: y}\n", []string{`"x"`, `"y"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := chatDoc(t, t.TempDir(), tc.src)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if tc.name == "broken provider is still declared" && strings.Contains(err.Error(), "unknown provider") {
				t.Errorf("error blames the model too: %q", err)
			}
		})
	}
}

// TestChatErrorsWithTheRest: the chat's mistakes are reported with the
// rest of the file's, not instead of them.
func TestChatErrorsWithTheRest(t *testing.T) {
	_, err := parseConfig("hub.yaml", []byte("servers:\n  b: {args: [y]}\nproviders:\n  a: {type: x}\n"))
	if err == nil || !strings.Contains(err.Error(), "hub.yaml:2: server 'b': no transport") || !strings.Contains(err.Error(), `hub.yaml:4: providers.a: unknown type "x"`) {
		t.Errorf("err = %v", err)
	}
}

// TestChatFeatures: the settings of templates, tool_result_format,
// history, approve and preselect decode, and every mistake is an error
// naming the line and the fix.
func TestChatFeatures(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.tmpl"), []byte("{{len .Tools}} tools"), 0o644); err != nil {
		t.Fatal(err)
	}
	const head = "providers:\n  p: {type: ollama}\nmodels:\n  m: {provider: p, template: t}\n"
	cfg, err := chatDoc(t, dir, head+`templates:
  t: {file: ok.tmpl}
  inline: |
    one
    two
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
	for _, c := range []struct{ what, got, want any }{
		{"format", cfg.Chat.ToolResultFormat, ResultWithCall},
		{"history", cfg.Chat.History, ChatHistory{MaxTokens: 1000, MaxTurns: 3}},
		{"approve", cfg.Chat.Approve, ApproveAlways},
		{"top_k", cfg.Chat.Preselect.TopK, 4},
		{"template file", cfg.Templates["t"], Template{Text: "{{len .Tools}} tools", Source: "ok.tmpl", FirstLine: 1}},
		{"inline template", cfg.Templates["inline"], Template{Text: "one\ntwo\n", Source: "hub.yaml", FirstLine: 8}},
	} {
		if c.got != c.want {
			t.Errorf("%s = %#v, want %#v", c.what, c.got, c.want)
		}
	}

	bad := []struct{ src, want string }{
		{"chat:\n  tool_result_format: fancy\n", `chat.tool_result_format: unknown format "fancy"; use result, name_result, name_args_result`},
		{"chat:\n  history: {max_tokenz: 5}\n", `hub.yaml:6: chat.history: unknown key "max_tokenz"; valid keys: max_tokens, max_turns`},
		{"chat:\n  history: {max_tokens: -5}\n", "chat.history: max_tokens and max_turns must be positive"},
		{"chat:\n  approve: sometimes\n", `chat.approve: unknown level "sometimes"; use off, on_miss, always`},
		{"chat:\n  preselect: {top_k: 1000}\n", "chat.preselect.top_k must be between 1 and 100"},
		{"chat:\n  preselect: {topk: 3}\n", `chat.preselect: unknown key "topk"`},
		{"templates:\n  t: {file: missing.tmpl}\n", "templates.t: open "},
		{"templates:\n  t: {file: ok.tmpl, text: hi}\n", "templates.t: set exactly one of file: or text:"},
		{"templates:\n  other: hi\n", `models.m: unknown template "t"; templates: other`},
	}
	for _, b := range bad {
		_, err := chatDoc(t, dir, head+b.src)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: error %v, want it to contain %q", b.src, err, b.want)
		}
	}
}

func TestKeyProblem(t *testing.T) {
	cases := []struct {
		p    Provider
		want string
	}{
		{Provider{Type: ProviderOpenAI}, "${OPENAI_API_KEY}"},
		{Provider{Type: ProviderOpenAI, BaseURL: "https://openrouter.ai/api/v1"}, "${OPENROUTER_API_KEY}"},
		{Provider{Type: ProviderAnthropic}, "${ANTHROPIC_API_KEY}"},
		{Provider{Type: ProviderOllama, BaseURL: OllamaChatBaseURL}, ""},
		{Provider{Type: ProviderOpenAI, BaseURL: "http://localhost:8000/v1"}, ""}, // vLLM, LM Studio
		{Provider{Type: ProviderOpenAI, APIKey: "k"}, ""},
	}
	for _, tc := range cases {
		got := tc.p.KeyProblem("p")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: KeyProblem = %q, want %q", tc.p, got, tc.want)
		}
	}
}
