package embed

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Providers: the wire format a Client speaks.
const (
	// ProviderOllama is Ollama's native POST /api/embed.
	ProviderOllama = "ollama"
	// ProviderOpenAI is the OpenAI-compatible POST /embeddings (OpenAI,
	// vLLM, TEI, LM Studio, Ollama's /v1).
	ProviderOpenAI = "openai"
)

// Defaults.
const (
	DefaultOllamaBaseURL = "http://localhost:11434"
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	// DefaultTimeout bounds one request when the config sets no timeout.
	// A local model answers a query in tens of milliseconds; a search
	// waiting longer than this is better served lexically.
	DefaultTimeout = time.Second
	// maxTimeout bounds timeout: past it a slow endpoint would make every
	// search look hung.
	maxTimeout = time.Minute
)

// Config is one embeddings endpoint, as written in hub.yaml
// (discovery.embeddings) or the chat's config.
type Config struct {
	// Provider is ProviderOllama or ProviderOpenAI.
	Provider string `yaml:"provider" json:"provider"`
	// Model is the endpoint's model id (nomic-embed-text,
	// text-embedding-3-small, ...). Required.
	Model string `yaml:"model" json:"model"`
	// BaseURL defaults to DefaultOllamaBaseURL or DefaultOpenAIBaseURL.
	// For OpenAI-compatible servers it is the URL the /embeddings path is
	// resolved against (http://host:8000/v1).
	BaseURL string `yaml:"base_url" json:"base_url,omitempty"`
	// APIKey is sent as a Bearer token, only to BaseURL's origin. Required
	// for the default OpenAI endpoint.
	APIKey string `yaml:"api_key" json:"-"`
	// Timeout bounds the wait for a query's vector (DefaultTimeout when
	// zero); batches of tool texts get BatchTimeout.
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
}

// Duration is a time.Duration written as Go duration text ("500ms", "2s")
// or plain seconds ("1.5").
type Duration time.Duration

// UnmarshalText reads "500ms", "2s" or "1.5" (seconds).
func (d *Duration) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	if v, err := time.ParseDuration(s); err == nil {
		*d = Duration(v)
		return nil
	}
	var secs float64
	if _, err := fmt.Sscanf(s, "%g", &secs); err == nil {
		*d = Duration(time.Duration(secs * float64(time.Second)))
		return nil
	}
	return fmt.Errorf("invalid duration %q: write it like 500ms or 2s", s)
}

// MarshalText writes Go duration text.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Normalize returns c with its defaults filled in, or an error naming the
// key that is wrong. Security fails closed: the default OpenAI endpoint
// without a key is an error, not an anonymous request.
func (c Config) Normalize() (Config, error) {
	c.Provider = strings.ToLower(strings.TrimSpace(c.Provider))
	c.Model = strings.TrimSpace(c.Model)
	c.BaseURL = strings.TrimSpace(c.BaseURL)
	switch c.Provider {
	case ProviderOllama:
		if c.BaseURL == "" {
			c.BaseURL = DefaultOllamaBaseURL
		}
		// Ollama's OpenAI-compatible base (…/v1), as the chat's provider
		// entries write it, names the same server.
		c.BaseURL = strings.TrimSuffix(strings.TrimSuffix(c.BaseURL, "/"), "/v1")
	case ProviderOpenAI:
		if c.BaseURL == "" {
			if c.APIKey == "" {
				return c, errors.New("embeddings: provider openai without base_url needs api_key (for a local OpenAI-compatible server, set base_url)")
			}
			c.BaseURL = DefaultOpenAIBaseURL
		}
	case "":
		return c, errors.New("embeddings: missing provider; set provider: ollama or openai (vLLM, TEI and LM Studio are openai with base_url)")
	default:
		return c, fmt.Errorf("embeddings: unknown provider %q; use ollama or openai (vLLM, TEI and LM Studio are openai with base_url)", c.Provider)
	}
	if c.Model == "" {
		return c, errors.New("embeddings: missing model (e.g. nomic-embed-text for Ollama, text-embedding-3-small for OpenAI)")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("embeddings: base_url %q is not an http(s) URL", c.BaseURL)
	}
	if u.User != nil {
		return c, errors.New("embeddings: base_url must not hold credentials; use api_key")
	}
	switch t := time.Duration(c.Timeout); {
	case t < 0:
		return c, errors.New("embeddings: timeout must be positive")
	case t == 0:
		c.Timeout = Duration(DefaultTimeout)
	case t > maxTimeout:
		return c, fmt.Errorf("embeddings: timeout %s is above the limit of %s", t, maxTimeout)
	}
	return c, nil
}
