package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/tokens"
)

// TokenReport compares what a client's first tools/list costs in tokens.
type TokenReport struct {
	AllTools  int     // every tool exposed (discovery off: what a plain aggregator lists)
	Discovery int     // the hub's first tools/list with its discovery settings
	SavingPct float64 // 100 * (AllTools - Discovery) / AllTools
}

// CountTokens counts the o200k_base tokens of tool definitions as a client
// receives them (each definition's compact JSON). The encoder is embedded in
// the binary (package internal/tokens): no network access; it is built on
// first use, never at start-up.
func CountTokens(defs []json.RawMessage) (int, error) {
	total := 0
	for i, d := range defs {
		var buf bytes.Buffer
		if err := json.Compact(&buf, d); err != nil {
			return 0, fmt.Errorf("tool definition %d: %w", i, err)
		}
		n, err := tokens.Count(buf.String())
		if err != nil {
			return 0, fmt.Errorf("count tokens of definition %d: %w", i, err)
		}
		total += n
	}
	return total, nil
}

// CompareTokens counts both lists of definitions: all tools exposed versus
// a first tools/list with discovery.
func CompareTokens(all, discovery []json.RawMessage) (TokenReport, error) {
	a, err := CountTokens(all)
	if err != nil {
		return TokenReport{}, fmt.Errorf("all tools: %w", err)
	}
	d, err := CountTokens(discovery)
	if err != nil {
		return TokenReport{}, fmt.Errorf("first tools/list: %w", err)
	}
	r := TokenReport{AllTools: a, Discovery: d}
	if a > 0 {
		r.SavingPct = 100 * float64(a-d) / float64(a)
	}
	return r, nil
}

// HubTokens counts the hub's own definitions: every catalog tool
// (h.AllToolDefinitions) against what a new client of the default toolset
// receives on its first tools/list (h.FirstToolsList: with discovery on, the
// eager tools and the meta-tools with their manifest).
func HubTokens(ctx context.Context, h *hub.Hub) (TokenReport, error) {
	all, err := h.AllToolDefinitions()
	if err != nil {
		return TokenReport{}, fmt.Errorf("all tool definitions: %w", err)
	}
	first, err := h.FirstToolsList("")
	if err != nil {
		return TokenReport{}, fmt.Errorf("first tools/list: %w", err)
	}
	return CompareTokens(all, first)
}

// SearchTokens is the mean o200k_base tokens of a search_tools result
// over queries, each searched as `mcp-hub search` does (a fresh session,
// the default toolset): every tool found is newly loaded and carries its
// input schema, the costliest form of a result. With steps, a query that
// has steps is searched by them (search_tools' queries).
func SearchTokens(ctx context.Context, h *hub.Hub, queries []Query, steps bool) (float64, error) {
	if len(queries) == 0 {
		return 0, nil
	}
	total := 0
	for _, q := range queries {
		res, err := h.Search(ctx, "", q.searched(steps), "")
		if err != nil {
			return 0, fmt.Errorf("search %s: %w", q.ID, err)
		}
		n, err := tokens.Count(hub.ResultText(res))
		if err != nil {
			return 0, fmt.Errorf("count tokens of the result of %s: %w", q.ID, err)
		}
		total += n
	}
	return float64(total) / float64(len(queries)), nil
}

// CorpusTokens builds a real hub over the corpus with discovery on and
// every server deferred, and counts its definitions (HubTokens).
func CorpusTokens(ctx context.Context, c *Corpus) (TokenReport, error) {
	h, err := NewHub(ctx, c)
	if err != nil {
		return TokenReport{}, err
	}
	defer h.Close()
	return HubTokens(ctx, h)
}

// NewHub starts a hub whose upstreams are the corpus's servers, each an
// in-process MCP server listing its corpus tools (calls return an error),
// with discovery on and every server deferred. It fails unless every
// corpus tool made it into the catalog. The caller closes the hub.
func NewHub(ctx context.Context, c *Corpus) (*hub.Hub, error) {
	cfg, err := CorpusConfig(c, config.Discovery{Enabled: true, DeferAll: true})
	if err != nil {
		return nil, err
	}
	// A corpus is measured, not served: its tools are not pinned (they
	// would land in the user's pin file, and a corpus tool with hidden
	// characters would be held back from the measure).
	cfg.Pinning.Off = true
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := hub.New(ctx, cfg, hub.Options{Logger: quiet, StartupWait: 5 * time.Minute, Builtin: CorpusBuiltin(c, nil)})
	if err != nil {
		return nil, fmt.Errorf("start hub: %w", err)
	}
	want := 0
	for _, s := range c.Servers {
		want += len(s.Tools)
	}
	if got := len(h.Catalog().Tools); got != want {
		h.Close()
		return nil, fmt.Errorf("hub catalog has %d of the corpus's %d tools", got, want)
	}
	return h, nil
}

// CorpusConfig is a hub config with one builtin server per corpus server
// (named as in the corpus; CorpusBuiltin runs them) and discovery d.
func CorpusConfig(c *Corpus, d config.Discovery) (*config.Config, error) {
	cfg := &config.Config{
		Path:      "corpus",
		Servers:   make(map[string]*config.Server, len(c.Servers)),
		Discovery: d,
	}
	for _, s := range c.Servers {
		if _, dup := cfg.Servers[s.Name]; dup {
			return nil, fmt.Errorf("corpus: duplicate server %q", s.Name)
		}
		cfg.Servers[s.Name] = &config.Server{Upstream: config.Upstream{Name: s.Name, Builtin: s.Name}}
		cfg.ServerOrder = append(cfg.ServerOrder, s.Name)
	}
	return cfg, nil
}

// CorpusBuiltin is hub.Options.Builtin for CorpusConfig: each corpus
// server as an in-process MCP server listing its tools. meta, if set,
// gives a tool's _meta.
func CorpusBuiltin(c *Corpus, meta func(Server, CorpusTool) mcp.Meta) func(name string, env map[string]string) (*mcp.Server, error) {
	byName := make(map[string]*Server, len(c.Servers))
	for i := range c.Servers {
		byName[c.Servers[i].Name] = &c.Servers[i]
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	return func(name string, _ map[string]string) (*mcp.Server, error) {
		s := byName[name]
		if s == nil {
			return nil, fmt.Errorf("no corpus server %q", name)
		}
		return corpusServer(s, meta, quiet)
	}
}

// corpusServer is an MCP server listing one corpus server's tools.
func corpusServer(s *Server, meta func(Server, CorpusTool) mcp.Meta, log *slog.Logger) (*mcp.Server, error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: s.Name, Version: "corpus"}, &mcp.ServerOptions{Logger: log})
	for _, t := range s.Tools {
		schema, err := objectSchema(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		def := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema}
		if meta != nil {
			def.Meta = meta(*s, t)
		}
		srv.AddTool(def, notCallable)
	}
	return srv, nil
}

func notCallable(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, fmt.Errorf("corpus tools cannot be called")
}

// objectSchema makes the schema's top-level type exactly "object", as the
// hub does for the upstream tools it exposes (the SDK refuses any other
// input schema). A missing or invalid schema becomes {"type":"object"}.
func objectSchema(raw json.RawMessage) (json.RawMessage, error) {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	if m["type"] == "object" {
		return raw, nil
	}
	m["type"] = "object"
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return b, nil
}
