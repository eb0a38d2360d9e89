package embed

import "github.com/mcp-hub/mcp-hub/config"

// An endpoint's settings are package config's (config.Embeddings, the
// discovery.embeddings key): embed reads them under these names.
type (
	Config   = config.Embeddings
	Duration = config.Duration
)

// Providers: the wire format a Client speaks.
const (
	ProviderOllama = config.EmbeddingsOllama
	ProviderOpenAI = config.EmbeddingsOpenAI
)

// Defaults.
const (
	DefaultOllamaBaseURL = config.DefaultOllamaBaseURL
	DefaultOpenAIBaseURL = config.DefaultOpenAIBaseURL
	DefaultTimeout       = config.DefaultEmbeddingsTimeout
)
