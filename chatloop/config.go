package chatloop

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
)

// Config is the chat's part of hub.yaml, as package config decoded it
// (providers, models, chat), with the templates parsed and the
// preselection the caller built.
type Config struct {
	Providers map[string]config.Provider
	Models    map[string]config.Model
	Chat      config.Chat
	// Templates are the system prompt templates, by name.
	Templates map[string]*Template
	// Preselector is chat.preselect's ranking; the caller builds it
	// (NewPreselector) from discovery.embeddings. nil = no preselection.
	Preselector *Preselector
}

// FromConfig is the chat's part of cfg. Its sections were decoded and
// checked with the rest of the file; what is left is parsing the
// templates, whose errors name the template's file (or hub.yaml) and line.
func FromConfig(cfg *config.Config) (*Config, error) {
	templates, err := parseTemplates(cfg.Templates)
	if err != nil {
		return nil, err
	}
	return &Config{Providers: cfg.Providers, Models: cfg.Models, Chat: cfg.Chat, Templates: templates}, nil
}

func names[V any](m map[string]V) string {
	if len(m) == 0 {
		return "(none)"
	}
	return strings.Join(slices.Sorted(maps.Keys(m)), ", ")
}

// ResolveModel picks the model: name if given, else chat.default_model,
// else the only model configured.
func (c *Config) ResolveModel(name string) (string, config.Model, config.Provider, error) {
	if name == "" {
		name = c.Chat.DefaultModel
	}
	if name == "" {
		switch len(c.Models) {
		case 0:
			return "", config.Model{}, config.Provider{}, errors.New("no models configured; add a models: section to hub.yaml (see `mcp-hub models`), e.g. models: {local: {provider: ollama, model: llama3.2}}")
		case 1:
			for n := range c.Models {
				name = n
			}
		default:
			return "", config.Model{}, config.Provider{}, fmt.Errorf("several models configured and no chat.default_model; pick one with --model (%s)", names(c.Models))
		}
	}
	m, ok := c.Models[name]
	if !ok {
		return "", config.Model{}, config.Provider{}, fmt.Errorf("unknown model %q; configured models: %s (see `mcp-hub models`)", name, names(c.Models))
	}
	return name, m, c.Providers[m.Provider], nil
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
	case config.ProviderAnthropic:
		return newAnthropic(name, p), nil
	case config.ProviderOllama:
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
