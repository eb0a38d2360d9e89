package chatloop

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// sections parses a hub.yaml fragment and returns its chat sections the
// way the hub's loader hands them over.
func sections(t *testing.T, src string) (p, m, c *yaml.Node) {
	t.Helper()
	var root struct {
		Providers yaml.Node `yaml:"providers"`
		Models    yaml.Node `yaml:"models"`
		Chat      yaml.Node `yaml:"chat"`
	}
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	return &root.Providers, &root.Models, &root.Chat
}

func TestDecodeConfig(t *testing.T) {
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
	p, m, c := sections(t, full)
	cfg, err := DecodeConfig(p, m, c)
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "ollama base_url", cfg.Providers["local"].BaseURL, "http://localhost:11434/v1")
	eq(t, "type lowercased", cfg.Providers["claude"].Type, TypeAnthropic)
	eq(t, "model defaults to name", cfg.Models["small"].Model, "small")
	eq(t, "temperature", *cfg.Models["big"].Temperature, 0.2)
	eq(t, "max_tokens", cfg.Models["big"].MaxTokens, 1000)
	eq(t, "max_rounds", cfg.Chat.MaxRounds, 7)
	eq(t, "parallel", *cfg.Chat.ParallelToolCalls, false)

	// Empty and absent sections: defaults.
	for _, src := range []string{"", "providers:\nmodels:\nchat:\n"} {
		p, m, c := sections(t, src)
		cfg, err := DecodeConfig(p, m, c)
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		eq(t, "default max_rounds", cfg.Chat.MaxRounds, 50)
		eq(t, "default parallel", *cfg.Chat.ParallelToolCalls, true)
	}
	if _, err := DecodeConfig(nil, nil, nil); err != nil {
		t.Fatalf("nil nodes: %v", err)
	}
}

func TestDecodeConfigErrors(t *testing.T) {
	cases := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown provider key", "providers:\n  a:\n    type: openai\n    apikey: x\n",
			[]string{`line 4: providers.a: unknown key "apikey"; valid keys: type, base_url, api_key`}},
		{"unknown model key", "providers:\n  a: {type: ollama}\nmodels:\n  m: {provider: a, temp: 1}\n",
			[]string{`line 4: models.m: unknown key "temp"`}},
		{"unknown chat key", "chat:\n  max_round: 3\n", []string{`line 2: chat: unknown key "max_round"; valid keys: default_model, max_rounds, parallel_tool_calls`}},
		{"bad type", "providers:\n  a: {type: gemini}\n", []string{`line 2: providers.a: unknown type "gemini"; use openai, anthropic or ollama`}},
		{"missing type", "providers:\n  a: {base_url: http://x}\n", []string{"providers.a: missing type"}},
		{"bad base_url", "providers:\n  a: {type: openai, base_url: localhost:1234}\n", []string{"is not an http(s) URL"}},
		{"unknown provider", "providers:\n  a: {type: ollama}\nmodels:\n  m: {provider: b}\n", []string{`line 4: models.m: unknown provider "b"; configured providers: a`}},
		{"broken provider is still declared", "providers:\n  a: {type: nope}\nmodels:\n  m: {provider: a}\n", []string{`unknown type "nope"`}},
		{"missing provider", "models:\n  m: {model: x}\n", []string{"models.m: missing provider"}},
		{"unknown default", "providers:\n  a: {type: ollama}\nmodels:\n  m: {provider: a}\nchat: {default_model: x}\n", []string{`chat.default_model: unknown model "x"; configured models: m`}},
		{"wrong value type", "chat:\n  max_rounds: many\n", []string{"line 2", "max_rounds"}},
		{"section not a mapping", "providers: [a, b]\n", []string{"line 1: providers must be a mapping"}},
		{"all errors together", "providers:\n  a: {type: x}\n  b: {type: y}\n", []string{`"x"`, `"y"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, m, c := sections(t, tc.src)
			_, err := DecodeConfig(p, m, c)
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

func TestKeyProblem(t *testing.T) {
	cases := []struct {
		p    ProviderConfig
		want string
	}{
		{ProviderConfig{Type: TypeOpenAI}, "${OPENAI_API_KEY}"},
		{ProviderConfig{Type: TypeOpenAI, BaseURL: "https://openrouter.ai/api/v1"}, "${OPENROUTER_API_KEY}"},
		{ProviderConfig{Type: TypeAnthropic}, "${ANTHROPIC_API_KEY}"},
		{ProviderConfig{Type: TypeOllama, BaseURL: defaultOllamaBaseURL}, ""},
		{ProviderConfig{Type: TypeOpenAI, BaseURL: "http://localhost:8000/v1"}, ""}, // vLLM, LM Studio
		{ProviderConfig{Type: TypeOpenAI, APIKey: "k"}, ""},
	}
	for _, tc := range cases {
		got := tc.p.KeyProblem("p")
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%+v: KeyProblem = %q, want %q", tc.p, got, tc.want)
		}
	}
}

func TestResolveModel(t *testing.T) {
	cfg := &Config{Models: map[string]ModelConfig{"a": {}, "b": {}}}
	if _, _, _, err := cfg.ResolveModel(""); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Errorf("two models, no default: err = %v", err)
	}
	if _, _, _, err := cfg.ResolveModel("zz"); err == nil || !strings.Contains(err.Error(), `unknown model "zz"; configured models: a, b`) {
		t.Errorf("unknown: err = %v", err)
	}
	one := &Config{Models: map[string]ModelConfig{"only": {}}}
	if name, _, _, err := one.ResolveModel(""); err != nil || name != "only" {
		t.Errorf("single model: %q, %v", name, err)
	}
	if _, _, _, err := (&Config{}).ResolveModel(""); err == nil || !strings.Contains(err.Error(), "no models configured") {
		t.Errorf("none: err = %v", err)
	}
}
