package chatloop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/embed"
)

// Preselection. With chat.preselect, each user turn starts by ranking
// every tool of the hub against the user's message by embedding
// similarity: the top_k tools, plus the always-on ones, are loaded into
// the session (search_tools with their exact names: a call to the hub,
// not a model round trip) and they, with the meta-tools and whatever the
// model loads itself during the turn, are the tools offered for that
// turn. A model that knows what it needs calls it at once; one that does
// not still has search_tools.
//
// A tool's vector is the embedding of "name: description", taken from the
// endpoint of discovery.embeddings and kept in an on-disk cache keyed by
// the hash of model and text (package embed), so only new or changed
// tools are embedded again. When the endpoint fails, the turn goes on
// with the session's tools as they are, and the failure is logged.

// ToolCatalog is what a Hub may also offer: every tool definition it
// exposes (as tools/list would show them), loaded or not. *hub.Hub is one.
type ToolCatalog interface {
	AllToolDefinitions() ([]json.RawMessage, error)
}

// Preselector ranks tools for a user message. It is safe for concurrent
// use: the HTTP API shares one across requests.
type Preselector struct {
	client *embed.Client
	cfg    config.ChatPreselect
	log    *slog.Logger

	mu    sync.Mutex // serialises cache use and saves
	cache *embed.Cache
}

// NewPreselector builds the ranking for chat.preselect on the endpoint of
// discovery.embeddings. stateDir holds the vector cache ("" = memory).
func NewPreselector(ec config.Embeddings, cfg config.ChatPreselect, stateDir string, log *slog.Logger) (*Preselector, error) {
	client, err := embed.New(ec, nil)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	model := "chat-preselect/" + client.Config().Provider + "/" + client.Model()
	cache, err := embed.OpenCache(stateDir, model)
	if err != nil {
		log.Warn("chat.preselect: vector cache", "err", err)
	}
	return &Preselector{client: client, cfg: cfg, log: log, cache: cache}, nil
}

// rankedTool is a tool with its vector.
type rankedTool struct {
	name string
	vec  []float32
}

// rank orders tools by cosine similarity to query, most similar first;
// ties keep catalog order.
func rank(query []float32, tools []rankedTool) []string {
	type scored struct {
		name  string
		score float32
	}
	s := make([]scored, len(tools))
	for i, t := range tools {
		s[i] = scored{t.name, embed.Cosine(query, t.vec)}
	}
	sort.SliceStable(s, func(i, j int) bool { return s[i].score > s[j].score })
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.name
	}
	return out
}

// toolText is what a tool's vector is made of.
func toolText(d ToolDef) string { return d.Name + ": " + d.Description }

// Select returns the tools to offer for message: the top_k of defs by
// similarity, then the always-on ones (those that exist).
func (p *Preselector) Select(ctx context.Context, defs []ToolDef, message string) ([]string, error) {
	if len(defs) == 0 {
		return nil, nil
	}
	texts := make([]string, len(defs))
	for i, d := range defs {
		texts[i] = toolText(d)
	}
	p.mu.Lock()
	vecs, missed, err := p.client.EmbedCached(ctx, p.cache, texts)
	if err == nil && missed > 0 {
		if serr := p.cache.Save(); serr != nil {
			p.log.Warn("chat.preselect: saving the vector cache", "err", serr)
		}
	}
	p.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("embed the tools: %w", err)
	}
	q, err := p.client.EmbedQuery(ctx, message)
	if err != nil {
		return nil, fmt.Errorf("embed the message: %w", err)
	}
	tools := make([]rankedTool, len(defs))
	for i, d := range defs {
		tools[i] = rankedTool{d.Name, vecs[i]}
	}
	ranked := rank(q, tools)
	picked := ranked[:min(p.cfg.TopK, len(ranked))]
	for _, name := range p.cfg.Always {
		if !slices.Contains(picked, name) && slices.ContainsFunc(defs, func(d ToolDef) bool { return d.Name == name }) {
			picked = append(picked, name)
		}
	}
	return picked, nil
}

// catalogDefs reads every tool the hub exposes.
func catalogDefs(h Hub) ([]ToolDef, error) {
	tc, ok := h.(ToolCatalog)
	if !ok {
		return nil, fmt.Errorf("the hub does not list its whole catalog")
	}
	raw, err := tc.AllToolDefinitions()
	if err != nil {
		return nil, err
	}
	defs := make([]ToolDef, 0, len(raw))
	for _, r := range raw {
		var t struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Title       string `json:"title"`
		}
		if json.Unmarshal(r, &t) != nil || t.Name == "" {
			continue
		}
		if t.Description == "" {
			t.Description = t.Title
		}
		defs = append(defs, ToolDef{Name: t.Name, Description: t.Description})
	}
	return defs, nil
}

// preselect runs at the start of a user turn: it picks the turn's tools,
// loads those the session lacks, and remembers what to offer. On failure
// the turn offers the session's tools as they are.
func (c *Chat) preselect(ctx context.Context, message string) {
	c.offer = nil
	if c.opts.Preselector == nil || message == "" {
		return
	}
	defs, err := catalogDefs(c.session.hub)
	if err == nil {
		var picked []string
		if picked, err = c.opts.Preselector.Select(ctx, defs, message); err == nil {
			err = c.load(ctx, picked)
			if err == nil {
				c.offer = map[string]bool{searchToolName: true, callToolName: true}
				for _, n := range picked {
					c.offer[n] = true
				}
				c.stats.Preselected += len(picked)
				c.opts.Logger.Debug("preselected tools", "tools", picked)
			}
		}
	}
	if err != nil {
		c.opts.Logger.Warn("chat.preselect: offering the session's tools as they are", "err", err)
	}
	// Tools listed now stay out unless picked; tools the model loads later
	// in the turn join.
	c.listedAtStart = map[string]bool{}
	if tools, _, err := c.session.Tools(ctx); err == nil {
		for _, t := range tools {
			c.listedAtStart[t.Name] = true
		}
	}
}

// load makes the session list names, through search_tools' exact names.
func (c *Chat) load(ctx context.Context, names []string) error {
	tools, _, err := c.session.Tools(ctx)
	if err != nil {
		return err
	}
	var missing []string
	for _, n := range names {
		if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == n }) {
			missing = append(missing, n)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	res, err := c.session.Call(ctx, searchToolName, map[string]any{"tool_names": missing})
	if err != nil {
		return fmt.Errorf("load the preselected tools: %w", err)
	}
	if res.IsError {
		return fmt.Errorf("load the preselected tools: %s", oneLine(resultText(resultParts(res), false)))
	}
	c.session.markStale()
	return nil
}

// offered filters a round's tools to the turn's preselection.
func (c *Chat) offered(defs []ToolDef) []ToolDef {
	if c.offer == nil {
		return defs
	}
	out := make([]ToolDef, 0, len(c.offer))
	for _, d := range defs {
		if c.offer[d.Name] || !c.listedAtStart[d.Name] {
			out = append(out, d)
		}
	}
	return out
}
