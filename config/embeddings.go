package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// Embeddings providers: the wire format an embeddings endpoint speaks
// (package embed is the client).
const (
	// EmbeddingsOllama is Ollama's native POST /api/embed.
	EmbeddingsOllama = "ollama"
	// EmbeddingsOpenAI is the OpenAI-compatible POST /embeddings (OpenAI,
	// vLLM, TEI, LM Studio, Ollama's /v1).
	EmbeddingsOpenAI = "openai"
)

// Endpoint defaults, shared by the embeddings client and the chat's
// providers.
const (
	// DefaultOllamaBaseURL is a local Ollama server, at its root: the
	// embeddings client posts to its native /api/embed there, and an
	// ollama chat provider talks to its OpenAI-compatible API under /v1
	// (OllamaChatBaseURL). The embeddings base_url may be written either
	// way (Normalize drops a /v1); a chat provider's is used as written.
	DefaultOllamaBaseURL = "http://localhost:11434"
	// DefaultOpenAIBaseURL is OpenAI's API, for embeddings and for an
	// openai chat provider without base_url.
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	// DefaultEmbeddingsTimeout bounds one request when the config sets no
	// timeout. A local model answers a query in tens of milliseconds; a
	// search waiting longer than this is better served lexically.
	DefaultEmbeddingsTimeout = time.Second
	// maxEmbeddingsTimeout bounds timeout: past it a slow endpoint would
	// make every search look hung.
	maxEmbeddingsTimeout = time.Minute
	// DefaultEmbeddingsWeight is the vectors' weight in search_tools'
	// blend when the config sets none (index.DefaultVectorWeight).
	DefaultEmbeddingsWeight = 0.5
	// maxEmbeddingsWeight is index.MaxVectorWeight: beyond it BM25F would
	// no longer count.
	maxEmbeddingsWeight = 10
)

// Embeddings is one embeddings endpoint, as written in hub.yaml
// (discovery.embeddings; the chat's preselection uses the same one).
type Embeddings struct {
	// Provider is EmbeddingsOllama or EmbeddingsOpenAI.
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
	// zero); batches of tool texts get embed.BatchTimeout.
	Timeout Duration `yaml:"timeout" json:"timeout,omitempty"`
	// Weight is the vectors' weight in search_tools' blend, against 1 for
	// BM25F: above 0, at most 10; nil for DefaultEmbeddingsWeight (see
	// VectorWeight). The chat's preselection ranks by the vectors alone
	// and ignores it.
	Weight *float64 `yaml:"weight" json:"weight,omitempty"`
}

// VectorWeight is Weight, or DefaultEmbeddingsWeight when unset.
func (c Embeddings) VectorWeight() float64 {
	if c.Weight == nil {
		return DefaultEmbeddingsWeight
	}
	return *c.Weight
}

// Normalize returns c with its defaults filled in, or an error naming the
// key that is wrong. Security fails closed: the default OpenAI endpoint
// without a key is an error, not an anonymous request.
func (c Embeddings) Normalize() (Embeddings, error) {
	c.Provider = strings.ToLower(strings.TrimSpace(c.Provider))
	c.Model = strings.TrimSpace(c.Model)
	c.BaseURL = strings.TrimSpace(c.BaseURL)
	switch c.Provider {
	case EmbeddingsOllama:
		if c.BaseURL == "" {
			c.BaseURL = DefaultOllamaBaseURL
		}
		// Ollama's OpenAI-compatible base (…/v1, OllamaChatBaseURL), as
		// the chat's provider entries write it, names the same server.
		c.BaseURL = strings.TrimSuffix(strings.TrimSuffix(c.BaseURL, "/"), "/v1")
	case EmbeddingsOpenAI:
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
		c.Timeout = Duration(DefaultEmbeddingsTimeout)
	case t > maxEmbeddingsTimeout:
		return c, fmt.Errorf("embeddings: timeout %s is above the limit of %s", t, maxEmbeddingsTimeout)
	}
	if w := c.VectorWeight(); !(w > 0 && w <= maxEmbeddingsWeight) {
		// 0 is not "lexical only": that is no embeddings block at all.
		return c, fmt.Errorf("embeddings: weight %g is not above 0 and at most %d (to search lexically, remove embeddings)", w, maxEmbeddingsWeight)
	}
	return c, nil
}
