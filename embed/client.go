package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/origin"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// Limits of one request.
const (
	// BatchSize is the number of texts sent in one request: far below
	// every server's limit (OpenAI takes 2,048), small enough that one
	// batch of tool texts is a few seconds on a CPU.
	BatchSize = 64
	// BatchTimeout bounds one batch of tool texts. Embedding a catalog
	// runs in the background, so it may wait far longer than a query;
	// the first request to Ollama also loads the model.
	BatchTimeout = 2 * time.Minute
	// MaxResponseBytes bounds one answer: 64 vectors of 8,192 dimensions
	// written as JSON are about 12 MiB.
	MaxResponseBytes = 32 << 20
	// maxErrorBytes bounds the part of an error answer that is read.
	maxErrorBytes = 16 << 10
	// MaxDimensions bounds a vector's length; real models stay under 8,192.
	MaxDimensions = 1 << 16
	// MaxQueryBytes is how much of a query is sent: models read a few
	// hundred tokens, so a longer text only costs the round trip (and
	// money, on a paid API). The lexical ranking reads more of it.
	MaxQueryBytes = 2000
)

// Client embeds texts through one endpoint. It is safe for concurrent use.
type Client struct {
	cfg      config.Embeddings
	endpoint string // the full URL requests go to
	http     *http.Client
	redact   *redact.Redactor
}

// New returns a client for cfg (normalised first; see Config.Normalize).
// transport may be nil for http.DefaultTransport.
func New(cfg config.Embeddings, transport http.RoundTripper) (*Client, error) {
	cfg, err := cfg.Normalize()
	if err != nil {
		return nil, err
	}
	path := "embeddings"
	if cfg.Provider == config.EmbeddingsOllama {
		path = "api/embed"
	}
	endpoint, err := resolve(cfg.BaseURL, path)
	if err != nil {
		return nil, fmt.Errorf("embeddings: base_url %q: %w", cfg.BaseURL, err)
	}
	c := &Client{
		cfg:      cfg,
		endpoint: endpoint,
		redact:   redact.New([]string{cfg.APIKey}),
	}
	if transport == nil {
		transport = http.DefaultTransport
	}
	// The key must reach only the configured origin: a redirect to
	// another one is refused rather than followed without it, which
	// would fail later with a less telling error.
	c.http = &http.Client{Transport: transport, CheckRedirect: origin.CheckRedirect}
	return c, nil
}

// resolve joins a base URL and an API path: http://host/v1 and
// http://host/v1/ both give http://host/v1/<path>.
func resolve(base, path string) (string, error) {
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	b, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	return b.JoinPath(path).String(), nil
}

// Config is the client's normalised config.
func (c *Client) Config() config.Embeddings { return c.cfg }

// Model is the model id vectors come from: vectors of different models
// are not comparable.
func (c *Client) Model() string { return c.cfg.Model }

// Timeout is the bound on a query's wait (Config.Timeout).
func (c *Client) Timeout() time.Duration { return time.Duration(c.cfg.Timeout) }

// Embed returns one unit vector per text, in order. Texts go in batches of
// BatchSize, each bounded by ctx and, for more than one batch,
// BatchTimeout. Every vector has the same dimension.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += BatchSize {
		batch := texts[start:min(start+BatchSize, len(texts))]
		bctx, cancel := ctx, context.CancelFunc(func() {})
		if len(texts) > BatchSize {
			bctx, cancel = context.WithTimeout(ctx, BatchTimeout)
		}
		vecs, err := c.embedBatch(bctx, batch)
		cancel()
		if err != nil {
			return nil, err
		}
		if len(out) > 0 && len(vecs[0]) != len(out[0]) {
			return nil, fmt.Errorf("embeddings %s: vectors of %d and %d dimensions in one answer set", c.cfg.Model, len(out[0]), len(vecs[0]))
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// EmbedQuery embeds one text, waiting at most Timeout.
func (c *Client) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := c.EmbedQueries(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

// EmbedQueries embeds the queries of one search (up to BatchSize go in
// one request, each cut to MaxQueryBytes), waiting at most Timeout in all.
func (c *Client) EmbedQueries(ctx context.Context, texts []string) ([][]float32, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout())
	defer cancel()
	cut := make([]string, len(texts))
	for i, t := range texts {
		cut[i] = clean.Prefix(t, MaxQueryBytes)
	}
	return c.Embed(ctx, cut)
}

type request struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type ollamaResponse struct {
	Embeddings [][]float32 `json:"embeddings"`
}

type openAIResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// embedBatch makes one request.
func (c *Client) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := c.post(ctx, texts)
	if err != nil {
		return nil, c.redact.Error(fmt.Errorf("embeddings %s (%s): %w", c.cfg.Model, c.endpoint, err))
	}
	return vecs, nil
}

func (c *Client) post(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.cfg.Model, Input: texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, failure(res)
	}
	data, err := io.ReadAll(io.LimitReader(res.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(data) > MaxResponseBytes {
		return nil, fmt.Errorf("answer larger than %d bytes", MaxResponseBytes)
	}
	var vecs [][]float32
	if c.cfg.Provider == config.EmbeddingsOllama {
		var r ollamaResponse
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("answer is not Ollama's {\"embeddings\": [...]}: %w", err)
		}
		vecs = r.Embeddings
	} else {
		var r openAIResponse
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, fmt.Errorf("answer is not OpenAI's {\"data\": [...]}: %w", err)
		}
		if len(r.Data) != len(texts) {
			return nil, fmt.Errorf("%d vectors for %d texts", len(r.Data), len(texts))
		}
		vecs = make([][]float32, len(texts))
		for _, d := range r.Data {
			if d.Index < 0 || d.Index >= len(texts) || vecs[d.Index] != nil {
				return nil, fmt.Errorf("answer has a bad or repeated index %d", d.Index)
			}
			vecs[d.Index] = d.Embedding
		}
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
	}
	for i, v := range vecs {
		switch {
		case len(v) == 0:
			return nil, fmt.Errorf("empty vector for text %d", i)
		case len(v) > MaxDimensions:
			return nil, fmt.Errorf("vector of %d dimensions (limit %d)", len(v), MaxDimensions)
		case len(v) != len(vecs[0]):
			return nil, fmt.Errorf("vectors of %d and %d dimensions in one answer", len(vecs[0]), len(v))
		}
		Normalize(v)
	}
	return vecs, nil
}

// failure reads the message of an error answer: Ollama's {"error": "..."}
// or OpenAI's {"error": {"message": "..."}}; else the status alone.
func failure(res *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBytes))
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	msg := ""
	if json.Unmarshal(data, &env) == nil && len(env.Error) > 0 {
		var s string
		var d struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(env.Error, &s) == nil {
			msg = s
		} else if json.Unmarshal(env.Error, &d) == nil {
			msg = d.Message
		}
	}
	if len(msg) > 500 {
		msg = msg[:500] + "..."
	}
	if msg == "" {
		return fmt.Errorf("HTTP %d", res.StatusCode)
	}
	return fmt.Errorf("HTTP %d: %s", res.StatusCode, msg)
}
