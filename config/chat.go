package config

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// The chat's sections of hub.yaml (providers, models, chat, templates),
// which `mcp-hub chat` and serve --chat-api read through package chatloop.
// They are decoded here, with the rest of the file, and checked section by
// section on the nodes themselves rather than with yaml's KnownFields:
// every mistake is reported with its line and key, and all of them at once.

// Provider types (providers.NAME.type).
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	// ProviderOllama is Ollama's OpenAI-compatible endpoint: no key, and a
	// default base_url (OllamaChatBaseURL).
	ProviderOllama = "ollama"
)

// OllamaChatBaseURL is an ollama provider's default base_url: Ollama's
// OpenAI-compatible API, which lives under /v1 of the server
// (DefaultOllamaBaseURL). The embeddings client speaks Ollama's native
// /api/embed at the server's root instead, and takes either form.
const OllamaChatBaseURL = DefaultOllamaBaseURL + "/v1"

// Chat defaults and bounds.
const (
	// DefaultChatMaxRounds is chat.max_rounds when unset: model calls per
	// user turn.
	DefaultChatMaxRounds = 50
	// MaxTopK bounds chat.preselect.top_k.
	MaxTopK = 100
)

// Approval levels of chat.approve: when tools that change things wait for
// a person's approval.
const (
	ApproveOff    = "off"
	ApproveOnMiss = "on_miss"
	ApproveAlways = "always"
)

// ApproveLevels are the values chat.approve takes.
func ApproveLevels() []string { return []string{ApproveOff, ApproveOnMiss, ApproveAlways} }

// CheckApproveLevel says why level is not an approval level ("" is: the
// default).
func CheckApproveLevel(level string) error {
	if level != "" && !slices.Contains(ApproveLevels(), level) {
		return fmt.Errorf("unknown level %q; use %s", level, strings.Join(ApproveLevels(), ", "))
	}
	return nil
}

// Values of chat.tool_result_format: how a tool result is shown to the
// model.
const (
	// ResultOnly sends the tool's output as it is (the default).
	ResultOnly = "result"
	// ResultWithName prefixes it with the tool's name: "name → output".
	ResultWithName = "name_result"
	// ResultWithCall prefixes it with the whole call:
	// "name({"a":1}) → output".
	ResultWithCall = "name_args_result"
)

func resultFormats() []string { return []string{ResultOnly, ResultWithName, ResultWithCall} }

// Provider is one entry of providers.
type Provider struct {
	Type    string `yaml:"type"`
	BaseURL string `yaml:"base_url"`
	APIKey  string `yaml:"api_key"`
}

// Model is one entry of models.
type Model struct {
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

// Chat is the chat section.
type Chat struct {
	DefaultModel      string `yaml:"default_model"`
	MaxRounds         int    `yaml:"max_rounds"`
	ParallelToolCalls *bool  `yaml:"parallel_tool_calls"`
	// ToolResultFormat is how tool results are shown to the model:
	// result, name_result or name_args_result.
	ToolResultFormat string `yaml:"tool_result_format"`
	// History bounds the conversation sent with each model call.
	History ChatHistory `yaml:"history"`
	// Approve is when tools that change things wait for approval: off,
	// on_miss or always; "" = the mode's default (chatloop.ChatOptions).
	Approve string `yaml:"approve"`
	// ApproveTools names more tools that need approval (globs allowed).
	ApproveTools []string `yaml:"approve_tools"`
	// Preselect picks each turn's tools by embeddings (chatloop's
	// preselect.go).
	Preselect ChatPreselect `yaml:"preselect"`
}

// ChatHistory is chat.history: how much of the conversation is sent with
// each model call.
type ChatHistory struct {
	// MaxTokens bounds the estimated tokens of the history sent with each
	// model call; 0 = no bound.
	MaxTokens int `yaml:"max_tokens"`
	// MaxTurns bounds the user turns sent (the current one included);
	// 0 = no bound.
	MaxTurns int `yaml:"max_turns"`
}

// ChatPreselect is chat.preselect: each turn offers the model the tools
// nearest the user's message by embeddings.
type ChatPreselect struct {
	// TopK is how many tools to preselect per turn (0: preselection off).
	TopK int `yaml:"top_k"`
	// Always are tools offered on every turn, by exact name.
	Always []string `yaml:"always"`
}

// Template is one entry of templates: the text of a system prompt
// template (package chatloop parses and runs it), read from its file when
// it names one.
type Template struct {
	Text string
	// Source is where the text came from: the file's path as written in
	// hub.yaml, or "hub.yaml" for inline text.
	Source string
	// FirstLine is the hub.yaml line of an inline template's first line,
	// so errors point into the user's file; 1 for files.
	FirstLine int
}

// chatKeys are the keys of the chat section.
var chatKeys = []string{"default_model", "max_rounds", "parallel_tool_calls", "tool_result_format", "history", "approve", "approve_tools", "preselect"}

// chatSubKeys are the keys of the chat section's own sections.
var chatSubKeys = map[string][]string{
	"history":   {"max_tokens", "max_turns"},
	"preselect": {"top_k", "always"},
}

// decodeChat decodes the chat's sections of the ${VAR}-expanded root into
// c, with their defaults. Every error is an *Error with the line.
func (c *Config) decodeChat(root *yaml.Node) error {
	doc := docMapping(root)
	providers, models, chat, templates := child(doc, "providers"), child(doc, "models"), child(doc, "chat"), child(doc, "templates")
	d := chatDecoder{path: c.Path}
	c.Providers, c.Models = map[string]Provider{}, map[string]Model{}
	c.Templates = d.templates(templates, filepath.Dir(c.Path))

	// declared keeps every provider name, valid or not, so a model that
	// names a broken provider is not also told the provider does not exist.
	declared := map[string]bool{}
	d.eachEntry("providers", providers, func(name string, n *yaml.Node) {
		declared[name] = true
		var p Provider
		if !d.decodeStrict("providers."+name, n, []string{"type", "base_url", "api_key"}, &p) {
			return
		}
		p.Type = strings.ToLower(strings.TrimSpace(p.Type))
		switch p.Type {
		case ProviderOpenAI, ProviderAnthropic:
		case ProviderOllama:
			if p.BaseURL == "" {
				p.BaseURL = OllamaChatBaseURL
			}
		case "":
			d.errorf(n.Line, "providers.%s: missing type; set type: openai, anthropic or ollama (OpenRouter, vLLM and LM Studio are type: openai with base_url)", name)
			return
		default:
			d.errorf(n.Line, "providers.%s: unknown type %q; use openai, anthropic or ollama (OpenRouter, vLLM and LM Studio are type: openai with base_url)", name, p.Type)
			return
		}
		if p.BaseURL != "" {
			if u, err := url.Parse(p.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				d.errorf(n.Line, "providers.%s: base_url %q is not an http(s) URL; e.g. base_url: https://openrouter.ai/api/v1", name, p.BaseURL)
				return
			}
		}
		c.Providers[name] = p
	})

	modelLines := map[string]int{}
	d.eachEntry("models", models, func(name string, n *yaml.Node) {
		var m Model
		if !d.decodeStrict("models."+name, n, []string{"provider", "model", "system", "temperature", "max_tokens", "template"}, &m) {
			return
		}
		if m.Model == "" {
			m.Model = name
		}
		if m.MaxTokens < 0 {
			d.errorf(n.Line, "models.%s: max_tokens must be positive", name)
		}
		// A template that failed to decode is reported once, not again by
		// every model naming it.
		if m.Template != "" && child(templates, m.Template) == nil {
			d.errorf(n.Line, "models.%s: unknown template %q; templates: %s", name, m.Template, nameList(c.Templates))
		}
		modelLines[name] = n.Line
		c.Models[name] = m
	})
	for _, name := range sortedKeys(c.Models) {
		m := c.Models[name]
		if m.Provider == "" {
			d.errorf(modelLines[name], "models.%s: missing provider; set provider: to one of: %s", name, nameList(declared))
		} else if !declared[m.Provider] {
			d.errorf(modelLines[name], "models.%s: unknown provider %q; configured providers: %s", name, m.Provider, nameList(declared))
		}
	}

	if chat != nil && !isNull(chat) {
		d.decodeStrict("chat", chat, chatKeys, &c.Chat)
	}
	d.checkSubKeys(chat)
	ch := &c.Chat
	if k := ch.Preselect.TopK; k < 0 || k > MaxTopK {
		d.errorf(line(chat), "chat.preselect.top_k must be between 1 and %d (0 or absent: off)", MaxTopK)
	}
	if err := CheckApproveLevel(ch.Approve); err != nil {
		d.errorf(line(chat), "chat.approve: %v", err)
	}
	if h := ch.History; h.MaxTokens < 0 || h.MaxTurns < 0 {
		d.errorf(line(chat), "chat.history: max_tokens and max_turns must be positive (0 = no bound)")
	}
	if f := ch.ToolResultFormat; f != "" && !slices.Contains(resultFormats(), f) {
		d.errorf(line(chat), "chat.tool_result_format: unknown format %q; use %s", f, strings.Join(resultFormats(), ", "))
	}
	if ch.MaxRounds < 0 {
		d.errorf(line(chat), "chat.max_rounds must be positive")
	}
	if ch.MaxRounds == 0 {
		ch.MaxRounds = DefaultChatMaxRounds
	}
	if ch.ParallelToolCalls == nil {
		t := true
		ch.ParallelToolCalls = &t
	}
	if dm := ch.DefaultModel; dm != "" {
		if _, ok := c.Models[dm]; !ok {
			d.errorf(line(chat), "chat.default_model: unknown model %q; configured models: %s", dm, nameList(c.Models))
		}
	}
	return errors.Join(d.errs...)
}

// KeyProblem says why provider name cannot be used for lack of an API key,
// or "" when it can. Ollama and self-hosted OpenAI-compatible servers need
// no key; OpenAI, OpenRouter and Anthropic do.
func (p Provider) KeyProblem(name string) string {
	if p.APIKey != "" {
		return ""
	}
	switch p.Type {
	case ProviderAnthropic:
		return fmt.Sprintf("provider %s has no api_key; set api_key: ${ANTHROPIC_API_KEY} under providers.%s and export ANTHROPIC_API_KEY", name, name)
	case ProviderOpenAI:
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
// that always requires a key ("" is the default, DefaultOpenAIBaseURL).
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

// chatDecoder gathers the errors of the chat's sections.
type chatDecoder struct {
	path string
	errs []error
}

func (d *chatDecoder) errorf(line int, format string, args ...any) {
	d.errs = append(d.errs, &Error{Path: d.path, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// templates reads the templates section: each entry is inline text (a
// string, or {text: ...}) or {file: PATH}, PATH relative to dir (the
// config file's folder).
func (d *chatDecoder) templates(n *yaml.Node, dir string) map[string]Template {
	out := map[string]Template{}
	d.eachEntry("templates", n, func(name string, v *yaml.Node) {
		var t Template
		switch v.Kind {
		case yaml.ScalarNode:
			t = Template{Text: v.Value, Source: "hub.yaml", FirstLine: inlineFirstLine(v)}
		case yaml.MappingNode:
			var spec struct {
				File string `yaml:"file"`
				Text string `yaml:"text"`
			}
			if !d.decodeStrict("templates."+name, v, []string{"file", "text"}, &spec) {
				return
			}
			switch {
			case (spec.File == "") == (spec.Text == ""):
				d.errorf(v.Line, "templates.%s: set exactly one of file: or text:", name)
				return
			case spec.File != "":
				path := spec.File
				if !filepath.IsAbs(path) && dir != "" {
					path = filepath.Join(dir, path)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					d.errs = append(d.errs, &Error{Path: d.path, Line: v.Line, Msg: fmt.Sprintf("templates.%s: %v", name, err)})
					return
				}
				t = Template{Text: string(b), Source: spec.File, FirstLine: 1}
			default:
				t = Template{Text: spec.Text, Source: "hub.yaml", FirstLine: inlineFirstLine(child(v, "text"))}
			}
		default:
			d.errorf(v.Line, "templates.%s must be the template text or {file: PATH}", name)
			return
		}
		out[name] = t
	})
	return out
}

// inlineFirstLine is the line of an inline template's first line of text:
// a block scalar (| or >) starts on the line after its indicator.
func inlineFirstLine(v *yaml.Node) int {
	if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return v.Line + 1
	}
	return v.Line
}

// checkSubKeys reports unknown keys inside the chat section's own
// sections (decodeStrict checks only the first level).
func (d *chatDecoder) checkSubKeys(chat *yaml.Node) {
	if chat == nil || isNull(chat) {
		return
	}
	for i := 0; i+1 < len(chat.Content); i += 2 {
		known, ok := chatSubKeys[chat.Content[i].Value]
		v := chat.Content[i+1]
		if !ok || v.Kind != yaml.MappingNode {
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			if k := v.Content[j]; !slices.Contains(known, k.Value) {
				d.errorf(k.Line, "chat.%s: unknown key %q; valid keys: %s", chat.Content[i].Value, k.Value, strings.Join(known, ", "))
			}
		}
	}
}

// eachEntry calls fn for each key of the mapping section.
func (d *chatDecoder) eachEntry(section string, n *yaml.Node, fn func(name string, n *yaml.Node)) {
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, "%s must be a mapping of name: settings", section)
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		fn(n.Content[i].Value, n.Content[i+1])
	}
}

// decodeStrict rejects keys outside known, then decodes n into out.
func (d *chatDecoder) decodeStrict(path string, n *yaml.Node, known []string, out any) bool {
	if n.Kind != yaml.MappingNode {
		d.errorf(n.Line, "%s must be a mapping with keys: %s", path, strings.Join(known, ", "))
		return false
	}
	ok := true
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(known, k.Value) {
			d.errorf(k.Line, "%s: unknown key %q; valid keys: %s", path, k.Value, strings.Join(known, ", "))
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
				d.errorf(n.Content[i+1].Line, "%s.%s: %s", path, n.Content[i].Value, yamlReason(e))
				found = true
			}
		}
		if !found {
			d.errs = append(d.errs, &Error{Path: d.path, Line: n.Line, Msg: fmt.Sprintf("%s: %v", path, err)})
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

func line(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	return n.Line
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// nameList is m's keys, sorted and comma-separated, or "(none)".
func nameList[V any](m map[string]V) string {
	if len(m) == 0 {
		return "(none)"
	}
	return strings.Join(sortedKeys(m), ", ")
}
