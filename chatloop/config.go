package chatloop

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Provider types accepted in hub.yaml.
const (
	TypeOpenAI    = "openai"
	TypeAnthropic = "anthropic"
	// TypeOllama is Ollama's OpenAI-compatible endpoint: no key, and a
	// default base_url.
	TypeOllama = "ollama"
)

const (
	defaultMaxRounds     = 50
	defaultOllamaBaseURL = "http://localhost:11434/v1"
	defaultOpenAIBaseURL = "https://api.openai.com/v1"
	// defaultMaxTokens is sent to Anthropic, whose API requires max_tokens.
	defaultMaxTokens = 4096
)

// Config is the chat's part of hub.yaml: providers, models and chat.
type Config struct {
	Providers map[string]ProviderConfig
	Models    map[string]ModelConfig
	Chat      ChatConfig
	// Templates are the system prompt templates, by name.
	Templates map[string]*Template
	// Preselector is chat.preselect's ranking; the caller builds it
	// (NewPreselector) from discovery.embeddings. nil = no preselection.
	Preselector *Preselector
}

// ProviderConfig is one entry of providers.
type ProviderConfig struct {
	Type    string `yaml:"type"`
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key"`
}

// ModelConfig is one entry of models.
type ModelConfig struct {
	Provider string `yaml:"provider"`
	// Model is the provider's model id; it defaults to the entry's name.
	Model       string   `yaml:"model"`
	System      string   `yaml:"system"`
	Temperature *float64 `yaml:"temperature"`
	MaxTokens   int      `yaml:"max_tokens"`
	// Template names an entry of templates that renders the system prompt
	// on every model call; an explicit system wins over it.
	Template string `yaml:"template"`
}

// ChatConfig is the chat section.
type ChatConfig struct {
	DefaultModel      string `yaml:"default_model"`
	MaxRounds         int    `yaml:"max_rounds"`
	ParallelToolCalls *bool  `yaml:"parallel_tool_calls"`
	// ToolResultFormat is how tool results are shown to the model:
	// result, name_result or name_args_result.
	ToolResultFormat string `yaml:"tool_result_format"`
	// History bounds the conversation sent with each model call.
	History HistoryConfig `yaml:"history"`
	// Approve is when tools that change things wait for approval: off,
	// on_miss or always; "" = the mode's default (ChatOptions).
	Approve string `yaml:"approve"`
	// ApproveTools names more tools that need approval (globs allowed).
	ApproveTools []string `yaml:"approve_tools"`
	// Preselect picks each turn's tools by embeddings (preselect.go).
	Preselect PreselectConfig `yaml:"preselect"`
}

// DecodeConfig decodes the providers, models and chat sections of hub.yaml,
// already ${VAR}-expanded by the hub's loader; nil nodes are empty
// sections. Unknown keys are errors. Keys are checked on the nodes
// themselves rather than by re-marshalling and decoding with KnownFields:
// re-marshalled text has its own line numbers, and an error must point at
// the line of the user's file.
func DecodeConfig(providers, models, chat *yaml.Node) (*Config, error) {
	return Decode(Sections{Providers: providers, Models: models, Chat: chat})
}

// Sections are the parts of hub.yaml the chat reads.
type Sections struct {
	Providers, Models, Chat, Templates *yaml.Node
	// Dir is the config file's folder; template files are relative to it.
	Dir string
}

// Decode is DecodeConfig with every chat section.
func Decode(s Sections) (*Config, error) {
	providers, models, chat := s.Providers, s.Models, s.Chat
	cfg := &Config{Providers: map[string]ProviderConfig{}, Models: map[string]ModelConfig{}}
	var errs []error
	cfg.Templates = decodeTemplates(s.Templates, s.Dir, &errs)

	// declared keeps every provider name, valid or not, so a model that
	// names a broken provider is not also told the provider does not exist.
	declared := map[string]bool{}
	eachEntry("providers", providers, &errs, func(name string, n *yaml.Node) {
		declared[name] = true
		var p ProviderConfig
		if !decodeStrict("providers."+name, n, []string{"type", "base_url", "api_key"}, &p, &errs) {
			return
		}
		p.Type = strings.ToLower(strings.TrimSpace(p.Type))
		switch p.Type {
		case TypeOpenAI, TypeAnthropic:
		case TypeOllama:
			if p.BaseURL == "" {
				p.BaseURL = defaultOllamaBaseURL
			}
		case "":
			errs = append(errs, fmt.Errorf("line %d: providers.%s: missing type; set type: openai, anthropic or ollama (OpenRouter, vLLM and LM Studio are type: openai with base_url)", n.Line, name))
			return
		default:
			errs = append(errs, fmt.Errorf("line %d: providers.%s: unknown type %q; use openai, anthropic or ollama (OpenRouter, vLLM and LM Studio are type: openai with base_url)", n.Line, name, p.Type))
			return
		}
		if p.BaseURL != "" {
			if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, fmt.Errorf("line %d: providers.%s: base_url %q is not an http(s) URL; e.g. base_url: https://openrouter.ai/api/v1", n.Line, name, p.BaseURL))
				return
			}
		}
		cfg.Providers[name] = p
	})

	modelLines := map[string]int{}
	eachEntry("models", models, &errs, func(name string, n *yaml.Node) {
		var m ModelConfig
		if !decodeStrict("models."+name, n, []string{"provider", "model", "system", "temperature", "max_tokens", "template"}, &m, &errs) {
			return
		}
		if m.Model == "" {
			m.Model = name
		}
		if m.MaxTokens < 0 {
			errs = append(errs, fmt.Errorf("line %d: models.%s: max_tokens must be positive", n.Line, name))
		}
		if m.Template != "" && !hasKey(s.Templates, m.Template) {
			errs = append(errs, fmt.Errorf("line %d: models.%s: unknown template %q; templates: %s", n.Line, name, m.Template, names(cfg.Templates)))
		}
		modelLines[name] = n.Line
		cfg.Models[name] = m
	})
	for _, name := range slices.Sorted(maps.Keys(cfg.Models)) {
		m := cfg.Models[name]
		if m.Provider == "" {
			errs = append(errs, fmt.Errorf("line %d: models.%s: missing provider; set provider: to one of: %s", modelLines[name], name, names(declared)))
		} else if !declared[m.Provider] {
			errs = append(errs, fmt.Errorf("line %d: models.%s: unknown provider %q; configured providers: %s", modelLines[name], name, m.Provider, names(declared)))
		}
	}

	if chat != nil && !isNull(chat) {
		decodeStrict("chat", chat, chatKeys, &cfg.Chat, &errs)
	}
	checkSubKeys(chat, &errs)
	if k := cfg.Chat.Preselect.TopK; k < 0 || k > MaxTopK {
		errs = append(errs, fmt.Errorf("line %d: chat.preselect.top_k must be between 1 and %d (0 or absent: off)", line(chat), MaxTopK))
	}
	if err := checkApproveLevel(cfg.Chat.Approve); err != nil {
		errs = append(errs, fmt.Errorf("line %d: chat.approve: %w", line(chat), err))
	}
	if h := cfg.Chat.History; h.MaxTokens < 0 || h.MaxTurns < 0 {
		errs = append(errs, fmt.Errorf("line %d: chat.history: max_tokens and max_turns must be positive (0 = no bound)", line(chat)))
	}
	if f := cfg.Chat.ToolResultFormat; f != "" && !slices.Contains(resultFormats, f) {
		errs = append(errs, fmt.Errorf("line %d: chat.tool_result_format: unknown format %q; use %s", line(chat), f, strings.Join(resultFormats, ", ")))
	}
	if cfg.Chat.MaxRounds < 0 {
		errs = append(errs, fmt.Errorf("line %d: chat.max_rounds must be positive", line(chat)))
	}
	if cfg.Chat.MaxRounds == 0 {
		cfg.Chat.MaxRounds = defaultMaxRounds
	}
	if cfg.Chat.ParallelToolCalls == nil {
		t := true
		cfg.Chat.ParallelToolCalls = &t
	}
	if d := cfg.Chat.DefaultModel; d != "" {
		if _, ok := cfg.Models[d]; !ok {
			errs = append(errs, fmt.Errorf("line %d: chat.default_model: unknown model %q; configured models: %s", line(chat), d, names(cfg.Models)))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

// hasKey reports whether mapping n has key k (a template that failed to
// parse is reported once, not again by every model naming it).
func hasKey(n *yaml.Node, k string) bool {
	if n == nil {
		return false
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return true
		}
	}
	return false
}

// chatKeys are the keys of the chat section.
var chatKeys = []string{"default_model", "max_rounds", "parallel_tool_calls", "tool_result_format", "history", "approve", "approve_tools", "preselect"}

// chatSubKeys are the keys of the chat section's own sections.
var chatSubKeys = map[string][]string{
	"history":   {"max_tokens", "max_turns"},
	"preselect": {"top_k", "always"},
}

// checkSubKeys reports unknown keys inside the chat section's own
// sections (decodeStrict checks only the first level).
func checkSubKeys(chat *yaml.Node, errs *[]error) {
	if chat == nil || isNull(chat) {
		return
	}
	n := chat
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		known, ok := chatSubKeys[n.Content[i].Value]
		v := n.Content[i+1]
		if !ok || v.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			if k := v.Content[j]; !slices.Contains(known, k.Value) {
				*errs = append(*errs, fmt.Errorf("line %d: chat.%s: unknown key %q; valid keys: %s", k.Line, n.Content[i].Value, k.Value, strings.Join(known, ", ")))
			}
		}
	}
}

func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// eachEntry calls fn for each key of the mapping section.
func eachEntry(section string, n *yaml.Node, errs *[]error, fn func(name string, n *yaml.Node)) {
	if n == nil || isNull(n) {
		return
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		*errs = append(*errs, fmt.Errorf("line %d: %s must be a mapping of name: settings", n.Line, section))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i].Value, n.Content[i+1])
	}
}

// decodeStrict rejects keys outside known, then decodes n into out.
func decodeStrict(path string, n *yaml.Node, known []string, out any, errs *[]error) bool {
	if n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		*errs = append(*errs, fmt.Errorf("line %d: %s must be a mapping with keys: %s", n.Line, path, strings.Join(known, ", ")))
		return false
	}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(known, k.Value) {
			*errs = append(*errs, fmt.Errorf("line %d: %s: unknown key %q; valid keys: %s", k.Line, path, k.Value, strings.Join(known, ", ")))
			ok = false
		}
	}
	if !ok {
		return false
	}
	if err := n.Decode(out); err != nil {
		// yaml's type errors name the line but not the key, and span lines:
		// decode key by key to say which setting is wrong.
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			one := &yaml.Node{Kind: yaml.MappingNode, Content: n.Content[i : i+2]}
			if e := one.Decode(reflect.New(reflect.TypeOf(out).Elem()).Interface()); e != nil {
				*errs = append(*errs, fmt.Errorf("line %d: %s.%s: %s", n.Content[i+1].Line, path, n.Content[i].Value, yamlReason(e)))
				found = true
			}
		}
		if !found {
			*errs = append(*errs, fmt.Errorf("%s: %w", path, err))
		}
		return false
	}
	return true
}

// yamlReason strips yaml's "yaml: unmarshal errors:\n  line N: " framing.
func yamlReason(err error) string {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg := te.Errors[0]
		if i := strings.Index(msg, ": "); strings.HasPrefix(msg, "line ") && i > 0 {
			msg = msg[i+2:]
		}
		return msg
	}
	return err.Error()
}

func names[V any](m map[string]V) string {
	if len(m) == 0 {
		return "(none)"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// ResolveModel picks the model: name if given, else chat.default_model,
// else the only model configured.
func (c *Config) ResolveModel(name string) (string, ModelConfig, ProviderConfig, error) {
	if name == "" {
		name = c.Chat.DefaultModel
	}
	if name == "" {
		switch len(c.Models) {
		case 0:
			return "", ModelConfig{}, ProviderConfig{}, errors.New("no models configured; add a models: section to hub.yaml (see `mcp-hub models`), e.g. models: {local: {provider: ollama, model: llama3.2}}")
		case 1:
			for n := range c.Models {
				name = n
			}
		default:
			return "", ModelConfig{}, ProviderConfig{}, fmt.Errorf("several models configured and no chat.default_model; pick one with --model (%s)", names(c.Models))
		}
	}
	m, ok := c.Models[name]
	if !ok {
		return "", ModelConfig{}, ProviderConfig{}, fmt.Errorf("unknown model %q; configured models: %s (see `mcp-hub models`)", name, names(c.Models))
	}
	return name, m, c.Providers[m.Provider], nil
}

// KeyProblem says why a provider cannot be used for lack of an API key, or
// "" when it can. Ollama and self-hosted OpenAI-compatible servers need no
// key; OpenAI, OpenRouter and Anthropic do.
func (p ProviderConfig) KeyProblem(name string) string {
	if p.APIKey != "" {
		return ""
	}
	switch p.Type {
	case TypeAnthropic:
		return fmt.Sprintf("provider %s has no api_key; set api_key: ${ANTHROPIC_API_KEY} under providers.%s and export ANTHROPIC_API_KEY", name, name)
	case TypeOpenAI:
		if needsKey(p.BaseURL) {
			env := "OPENAI_API_KEY"
			if strings.Contains(p.BaseURL, "openrouter.ai") {
				env = "OPENROUTER_API_KEY"
			}
			return fmt.Sprintf("provider %s has no api_key; set api_key: ${%s} under providers.%s and export %s", name, env, name, env)
		}
	}
	return ""
}

// needsKey reports whether an OpenAI-compatible endpoint is a hosted one
// that always requires a key.
func needsKey(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return true
	}
	h := u.Hostname()
	return h == "api.openai.com" || strings.HasSuffix(h, "openrouter.ai")
}

// NewProvider builds the provider client for providers.name.
func (c *Config) NewProvider(name string) (Provider, error) {
	p, ok := c.Providers[name]
	if !ok {
		return nil, fmt.Errorf("unknown provider %q; configured providers: %s", name, names(c.Providers))
	}
	if msg := p.KeyProblem(name); msg != "" {
		return nil, errors.New(msg)
	}
	switch p.Type {
	case TypeAnthropic:
		return newAnthropic(name, p), nil
	case TypeOllama:
		return newOpenAI(name, p, false), nil
	default:
		return newOpenAI(name, p, true), nil
	}
}

// ChatOptions are the per-chat choices made on the command line.
type ChatOptions struct {
	// Model is a name from models ("" = chat.default_model).
	Model string
	// System overrides the model's system prompt and template.
	System   string
	Stream   bool
	Observer Observer
	Logger   *slog.Logger
	// ResponseSchema makes every final answer a JSON object valid against
	// it; nil = free text.
	ResponseSchema *ResponseSchema
	// DefaultApprove is the approval level when chat.approve is not set:
	// on_miss for the REPL, -p and the HTTP API alike (-p refuses what
	// needs approval unless --yes; the API waits for the client's answer).
	DefaultApprove string
	// Approver answers approval requests (nil refuses them as Unasked).
	Approver Approver
	// AllowHint is Options.AllowHint.
	AllowHint string
	// Preselector is chat.preselect's ranking (NewPreselector), built by
	// the caller, who knows discovery.embeddings and the state folder.
	Preselector *Preselector
}

// NewChat resolves the model, builds its provider and starts a chat on
// session. System prompt precedence: o.System, then the model's system,
// then the model's template (rendered on every model call), then
// DefaultSystemPrompt.
func (c *Config) NewChat(session *Session, o ChatOptions) (*Chat, error) {
	name, m, _, err := c.ResolveModel(o.Model)
	if err != nil {
		return nil, err
	}
	prov, err := c.NewProvider(m.Provider)
	if err != nil {
		return nil, fmt.Errorf("model %s: %w", name, err)
	}
	system := o.System
	if system == "" {
		system = m.System
	}
	var tmpl *Template
	if system == "" && m.Template != "" {
		tmpl = c.Templates[m.Template]
		if tmpl == nil {
			return nil, fmt.Errorf("model %s: unknown template %q", name, m.Template)
		}
	}
	if system == "" && tmpl == nil {
		system = DefaultSystemPrompt
	}
	parallel := c.Chat.ParallelToolCalls == nil || *c.Chat.ParallelToolCalls
	return New(session, Options{
		Provider:          prov,
		ModelName:         name,
		Model:             m.Model,
		System:            system,
		Template:          tmpl,
		Temperature:       m.Temperature,
		MaxTokens:         m.MaxTokens,
		MaxRounds:         c.Chat.MaxRounds,
		ParallelToolCalls: parallel,
		ToolResultFormat:  c.Chat.ToolResultFormat,
		History:           c.Chat.History,
		ResponseSchema:    o.ResponseSchema,
		Approve:           cmp.Or(c.Chat.Approve, o.DefaultApprove),
		ApproveTools:      c.Chat.ApproveTools,
		Approver:          o.Approver,
		AllowHint:         o.AllowHint,
		Preselector:       cmp.Or(o.Preselector, c.Preselector),
		Stream:            o.Stream,
		Observer:          o.Observer,
		Logger:            o.Logger,
	}), nil
}
