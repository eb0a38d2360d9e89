package eval

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-hub/mcp-hub/embed"
	"github.com/mcp-hub/mcp-hub/index"
)

// Hybrid is a Searcher that ranks like a hub with discovery.embeddings:
// the index's BM25F fused with the similarity of embedding vectors
// (index.SearchHybrid). The tools' vectors come from the endpoint once
// (through cache), and every query is embedded up front, one request
// each, so that Run times the search alone; RoundTrips are the endpoint's
// times for those query requests.
type Hybrid struct {
	ix      *index.Index
	vecs    *index.Vectors
	queries map[string][]float32
	// RoundTrips are the query embeddings' round trips, in query order.
	RoundTrips []time.Duration
}

// NewHybrid embeds tools (the index's, in its order) and every query and
// step; weight is the vectors' weight in the blend (index.NewVectors).
func NewHybrid(ctx context.Context, ix *index.Index, tools []index.Tool, client *embed.Client, cache *embed.Cache, queries []Query, weight float64) (*Hybrid, error) {
	texts := make([]string, len(tools))
	for i, t := range tools {
		texts[i] = index.EmbedText(t)
	}
	vecs, _, err := client.EmbedCached(ctx, cache, texts)
	if err != nil {
		return nil, fmt.Errorf("embedding the tools: %w", err)
	}
	if err := cache.Save(); err != nil {
		return nil, err
	}
	v, err := ix.NewVectors(vecs, weight)
	if err != nil {
		return nil, err
	}
	h := &Hybrid{ix: ix, vecs: v, queries: make(map[string][]float32, len(queries))}
	for _, q := range queries {
		for _, text := range append([]string{q.Query}, q.Steps...) {
			if _, ok := h.queries[text]; ok {
				continue
			}
			start := time.Now()
			qv, err := client.EmbedQuery(ctx, text)
			if err != nil {
				return nil, fmt.Errorf("embedding query %s: %w", q.ID, err)
			}
			h.RoundTrips = append(h.RoundTrips, time.Since(start))
			h.queries[text] = qv
		}
	}
	return h, nil
}

// Search is index.SearchHybrid with the query's vector (lexical for a
// query that was not embedded).
func (h *Hybrid) Search(query, server string, k int) []index.Result {
	return h.ix.SearchHybrid(query, h.queries[query], h.vecs, server, k)
}
