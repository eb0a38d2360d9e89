package hub

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/index"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// notesTools are a server whose tool shares no word with "memorize this
// fact": only the embedding model (whose concepts make memorize and memory
// one) finds it.
var notesTools = []fixture.Tool{
	{Name: "save_memory", Description: "Keep a fact in long-term memory.", Schema: `{"type":"object","properties":{"fact":{"type":"string"}},"required":["fact"]}`},
}

// semanticConfig is SMALL plus notes (deferred), with embeddings at srv.
func semanticConfig(srv *fixture.EmbeddingsServer, provider string, timeout time.Duration) *config.Config {
	cfg := fixture.SmallConfig()
	cfg.Servers["notes"] = fixture.ServerEntry("notes", fixture.DeferLoading(true))
	cfg.ServerOrder = append(cfg.ServerOrder, "notes")
	ec := &config.Embeddings{Provider: provider, Model: "test-embed", BaseURL: srv.URL, Timeout: config.Duration(timeout)}
	if provider == config.EmbeddingsOpenAI {
		ec.BaseURL = srv.URL + "/v1"
	}
	cfg.Discovery.Embeddings = ec
	return cfg
}

func startSemanticHub(t *testing.T, cfg *config.Config, fx *fixture.Servers, stateDir string, log *fixture.Log) *Hub {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := New(ctx, cfg, Options{Logger: slog.New(slog.NewTextHandler(log, nil)), StartupWait: 20 * time.Second, Builtin: fx.Builtin, StateDir: stateDir})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// vectorsReady waits until the current catalog's vectors are attached.
func vectorsReady(t *testing.T, h *Hub) {
	t.Helper()
	fixture.Eventually(t, 20*time.Second, "the catalog's vectors", func() bool {
		return h.Catalog().vectors.Load() != nil
	})
}

func TestHybridSearchEndToEnd(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{config.EmbeddingsOllama, config.EmbeddingsOpenAI} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			srv := fixture.StartEmbeddings(t, map[string]string{"memorize": "memory"})
			fx := fixture.NewServers()
			fx.Define("notes", notesTools...)
			state := t.TempDir()
			log := fixture.NewLog(t)

			// Lexically, nothing in the catalog says "memorize".
			lexical := newTestHub(t, func() *config.Config {
				cfg := semanticConfig(srv, provider, time.Second)
				cfg.Discovery.Embeddings = nil
				return cfg
			}(), fx)
			if text, _ := connectClient(t, lexical, "").search(map[string]any{"query": "memorize"}); !strings.HasPrefix(text, "No tools found") {
				t.Fatalf("lexical search found something: %s", text)
			}

			cfg := semanticConfig(srv, provider, time.Second)
			h := startSemanticHub(t, cfg, fx, state, log)
			vectorsReady(t, h)
			_, texts := srv.Requests()
			if texts != 5 { // weather 2, math 2, notes 1; clock is eager
				t.Errorf("%d texts embedded, want the 5 deferred tools", texts)
			}
			c := connectClient(t, h, "")
			text, isErr := c.search(map[string]any{"query": "memorize"})
			if isErr || !strings.Contains(firstHitLine(text), "notes__save_memory") {
				t.Fatalf("hybrid search: first hit is not notes__save_memory:\n%s", text)
			}
			// Lexical hits keep their place: a word match still leads.
			if text, _ := c.search(map[string]any{"query": "multiply numbers"}); !strings.Contains(firstHitLine(text), "math__multiply") {
				t.Errorf("hybrid search for multiply numbers:\n%s", text)
			}
			// A server-scoped search stays within the server.
			if text, _ := c.search(map[string]any{"query": "memorize", "server_name": "weather"}); strings.Contains(text, "notes__") || strings.Contains(text, "math__") {
				t.Errorf("server-scoped hybrid search left the server:\n%s", text)
			}
			// The steps of a task are embedded in one request, and each
			// step's hybrid ranking gets its place in the interleaving.
			reqs, texts := srv.Requests()
			text, _ = c.search(map[string]any{"queries": []string{"memorize", "multiply numbers"}})
			if found := foundNames(text); len(found) < 2 || found[0] != "notes__save_memory" || found[1] != "math__multiply" {
				t.Errorf("hybrid search of two steps: found %v, want notes__save_memory, math__multiply first\n%s", found, text)
			}
			if r, n := srv.Requests(); r-reqs != 1 || n-texts != 2 {
				t.Errorf("two steps took %d requests with %d texts, want one with both", r-reqs, n-texts)
			}
			h.Close()

			// A restart with the same tools takes every vector from the
			// cache: only queries reach the endpoint.
			_, before := srv.Requests()
			h = startSemanticHub(t, cfg, fx, state, log)
			if h.Catalog().vectors.Load() == nil {
				t.Fatal("after a restart the vectors were not attached from the cache at once")
			}
			if _, after := srv.Requests(); after != before {
				t.Errorf("a restart embedded %d texts again", after-before)
			}

			// A catalog change embeds only the new tool.
			_, before = srv.Requests()
			old := h.Catalog()
			fx.AddTool("notes", fixture.Tool{Name: "forget_memory", Description: "Drop a fact from long-term memory.", Schema: `{"type":"object"}`})
			fixture.Eventually(t, 20*time.Second, "a catalog with notes__forget_memory and its vectors", func() bool {
				c := h.Catalog()
				_, ok := c.Tool("notes__forget_memory")
				return c != old && ok && c.vectors.Load() != nil
			})
			if _, after := srv.Requests(); after-before != 1 {
				t.Errorf("the catalog change embedded %d texts, want the one new tool", after-before)
			}
			seen := srv.Seen()
			if last := seen[len(seen)-1]; !strings.HasPrefix(last, "forget memory. Drop a fact") {
				t.Errorf("last embedded text %q", last)
			}
		})
	}
}

// TestHybridSearchFallback: an endpoint that does not answer in time gives
// the lexical result within the bound, logged once per outage.
func TestHybridSearchFallback(t *testing.T) {
	t.Parallel()
	srv := fixture.StartEmbeddings(t, nil)
	fx := fixture.NewServers()
	fx.Define("notes", notesTools...)
	log := &fixture.Log{}
	const bound = 300 * time.Millisecond
	h := startSemanticHub(t, semanticConfig(srv, config.EmbeddingsOllama, bound), fx, t.TempDir(), log)
	vectorsReady(t, h)
	c := connectClient(t, h, "")

	srv.Hold()
	for range 3 {
		start := time.Now()
		text, isErr := c.search(map[string]any{"query": "weather forecast"})
		took := time.Since(start)
		if isErr || !strings.Contains(firstHitLine(text), "weather__get_forecast") {
			t.Fatalf("fallback search:\n%s", text)
		}
		// The bound plus the in-memory round trip of a tools/call; a
		// loaded machine gets a generous margin, but never a second bound.
		if took > 2*bound {
			t.Errorf("a search took %v with a %v bound", took, bound)
		}
	}
	if n := strings.Count(log.String(), "searching lexically"); n != 1 {
		t.Errorf("the fallback was logged %d times, want once:\n%s", n, log.String())
	}
	srv.Release()

	// The endpoint is back: hybrid again, said once; a new outage is
	// logged again.
	if text, _ := c.search(map[string]any{"query": "weather forecast"}); !strings.Contains(firstHitLine(text), "weather__get_forecast") {
		t.Fatalf("search after recovery:\n%s", text)
	}
	if !strings.Contains(log.String(), "hybrid search is back") {
		t.Errorf("recovery not logged:\n%s", log.String())
	}
	srv.SetFail(503)
	c.search(map[string]any{"query": "weather forecast"})
	if n := strings.Count(log.String(), "searching lexically"); n != 2 {
		t.Errorf("the second outage: logged %d times in all, want 2", n)
	}
}

// TestHybridSearchRetry: tools that could not be embedded (the endpoint
// failed) are tried again, and their vectors attach once it answers.
func TestHybridSearchRetry(t *testing.T) {
	t.Parallel()
	srv := fixture.StartEmbeddings(t, nil)
	srv.Hold() // the first attempt waits here until the retry is short
	fx := fixture.NewServers()
	fx.Define("notes", notesTools...)
	log := &fixture.Log{}
	h := startSemanticHub(t, semanticConfig(srv, config.EmbeddingsOpenAI, time.Second), fx, t.TempDir(), log)
	h.semantic.Load().retryFirst.Store(int64(20 * time.Millisecond))
	ctx, cancel := context.WithTimeout(fixture.Context(t), 50*time.Millisecond)
	if h.AwaitEmbeddings(ctx) {
		t.Error("AwaitEmbeddings reported vectors while the endpoint hangs")
	}
	cancel()
	srv.SetFail(http.StatusServiceUnavailable)
	srv.Release()
	log.WaitFor(t, "a failed embedding run retried", 20*time.Second, func(s string) bool { return strings.Contains(s, "retrying") })
	if h.Catalog().vectors.Load() != nil {
		t.Fatal("vectors attached while the endpoint failed")
	}
	srv.SetFail(0)
	if !h.AwaitEmbeddings(fixture.Context(t)) || h.Catalog().vectors.Load() == nil {
		t.Fatal("AwaitEmbeddings returned without the vectors once the endpoint answered")
	}
}

// TestHybridSearchReload: a reload that changes the model embeds the tools
// again under it; one that drops discovery.embeddings makes search lexical.
func TestHybridSearchReload(t *testing.T) {
	t.Parallel()
	srv := fixture.StartEmbeddings(t, nil)
	fx := fixture.NewServers()
	fx.Define("notes", notesTools...)
	cfg := semanticConfig(srv, config.EmbeddingsOllama, time.Second)
	h := startSemanticHub(t, cfg, fx, t.TempDir(), fixture.NewLog(t))
	vectorsReady(t, h)
	_, before := srv.Requests()

	next := semanticConfig(srv, config.EmbeddingsOllama, time.Second)
	next.Discovery.Embeddings.Model = "test-embed-v2"
	if err := h.Apply(fixture.Context(t), next); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 20*time.Second, "vectors of the new model", func() bool {
		v := h.Catalog().vectors.Load()
		return v != nil && v.sem.client.Model() == "test-embed-v2"
	})
	if _, after := srv.Requests(); after-before != 5 {
		t.Errorf("the new model embedded %d texts, want the 5 deferred tools", after-before)
	}

	lexical := semanticConfig(srv, config.EmbeddingsOllama, time.Second)
	lexical.Discovery.Embeddings = nil
	if err := h.Apply(fixture.Context(t), lexical); err != nil {
		t.Fatal(err)
	}
	if h.semantic.Load() != nil || h.Catalog().vectors.Load() != nil {
		t.Error("embeddings still in use after the reload dropped them")
	}
	_, before = srv.Requests()
	if text, _ := connectClient(t, h, "").search(map[string]any{"query": "weather forecast"}); !strings.Contains(firstHitLine(text), "weather__get_forecast") {
		t.Errorf("lexical search after the reload:\n%s", text)
	}
	if _, after := srv.Requests(); after != before {
		t.Error("a search asked the endpoint after the reload dropped it")
	}
}

// TestEmbeddingsConfig: discovery.embeddings is read from hub.yaml and
// checked at load.
func TestEmbeddingsConfig(t *testing.T) {
	t.Parallel()
	const ollama = "discovery:\n  enabled: true\n  embeddings:\n    provider: ollama\n    model: nomic-embed-text\n    timeout: 500ms\n"
	tests := []struct {
		name, yaml, wantErr string
		wantWeight          float64
	}{
		{"ollama", ollama, "", 0.5},
		{"weight", ollama + "    weight: 0.2\n", "", 0.2},
		{"weight 0", ollama + "    weight: 0\n", "remove embeddings", 0},
		{"negative weight", ollama + "    weight: -1\n", "weight -1", 0},
		{"weight above 10", ollama + "    weight: 12\n", "at most 10", 0},
		{"weight not a number", ollama + "    weight: .nan\n", "weight NaN", 0},
		{"openai without key", "discovery:\n  enabled: true\n  embeddings:\n    provider: openai\n    model: text-embedding-3-small\n", "needs api_key", 0},
		{"unknown key", "discovery:\n  enabled: true\n  embeddings:\n    provider: ollama\n    model: m\n    dims: 3\n", "dims", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse("hub.yaml", []byte("servers:\n  s: {builtin: time}\n"+tt.yaml), builtin.Names())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e := cfg.Discovery.Embeddings; e == nil || e.Model != "nomic-embed-text" || time.Duration(e.Timeout) != 500*time.Millisecond || e.VectorWeight() != tt.wantWeight {
				t.Errorf("embeddings = %+v", e)
			}
		})
	}
}

// firstHitLine is the first line of the first tool of a search result.
func firstHitLine(text string) string {
	_, rest, ok := strings.Cut(text, "tool(s):\n\n")
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(rest, "\n")
	return line
}

// TestSearchToolsetDeepHit: a toolset's tool that ranks below many tools
// the toolset hides is still found, lexically and hybrid (the search
// widens past its first window).
func TestSearchToolsetDeepHit(t *testing.T) {
	t.Parallel()
	srv := fixture.StartEmbeddings(t, nil)
	for _, hybrid := range []bool{false, true} {
		fx := fixture.NewServers()
		fx.Define("bigserver", fixture.BigTools(60)...)
		fx.Define("misc", fixture.Tool{Name: "misc_tool", Description: "A tool.", Schema: `{"type":"object"}`})
		cfg := fixture.BigConfig(3)
		cfg.Servers["misc"] = fixture.ServerEntry("misc", fixture.DeferLoading(true))
		cfg.ServerOrder = append(cfg.ServerOrder, "misc")
		cfg.Toolsets = map[string]*config.Toolset{"m": {Servers: map[string]*config.ToolSelection{"misc": {All: true}}}}
		if hybrid {
			cfg.Discovery.Embeddings = &config.Embeddings{Provider: config.EmbeddingsOllama, Model: "m", BaseURL: srv.URL}
		}
		h := startSemanticHub(t, cfg, fx, t.TempDir(), fixture.NewLog(t))
		if hybrid {
			vectorsReady(t, h)
		}
		// misc__misc_tool matches only "tool": the 60 big tools rank above it.
		text, _ := connectClient(t, h, "m").search(map[string]any{"query": "tool number big server"})
		if got := foundNames(text); !slices.Equal(got, []string{"misc__misc_tool"}) {
			t.Errorf("hybrid %t: found %v:\n%s", hybrid, got, text)
		}
	}
}

// TestHybridSearchWeight: discovery.embeddings.weight sets the blend, at
// start and on a reload. A request that names one tool's words and means
// another's: BM25F's pick leads at the default weight, the vectors' at the
// highest the config allows (which the index must take).
func TestHybridSearchWeight(t *testing.T) {
	t.Parallel()
	if config.DefaultEmbeddingsWeight != index.DefaultVectorWeight {
		t.Errorf("the config's default weight %v is not the index's %v", config.DefaultEmbeddingsWeight, index.DefaultVectorWeight)
	}
	srv := fixture.StartEmbeddings(t, map[string]string{"memorize": "memory", "remember": "memory"})
	fx := fixture.NewServers()
	fx.Define("notes", notesTools...)
	const query = "memorize and remember, remember: multiply"
	firstHit := func(h *Hub) string {
		text, _ := connectClient(t, h, "").search(map[string]any{"query": query})
		return firstHitLine(text)
	}
	h := startSemanticHub(t, semanticConfig(srv, config.EmbeddingsOllama, time.Second), fx, t.TempDir(), fixture.NewLog(t))
	vectorsReady(t, h)
	if got := firstHit(h); !strings.Contains(got, "math__multiply") {
		t.Errorf("default weight: first hit %q, want math__multiply", got)
	}

	next := semanticConfig(srv, config.EmbeddingsOllama, time.Second)
	highest := 10.0
	next.Discovery.Embeddings.Weight = &highest
	old := h.Catalog().vectors.Load()
	if err := h.Apply(fixture.Context(t), next); err != nil {
		t.Fatal(err)
	}
	fixture.Eventually(t, 20*time.Second, "vectors under the new weight", func() bool {
		v := h.Catalog().vectors.Load()
		return v != nil && v != old
	})
	if got := firstHit(h); !strings.Contains(got, "notes__save_memory") {
		t.Errorf("weight 10 after a reload: first hit %q, want notes__save_memory", got)
	}
}

// TestHybridSearchRealModel: with a real sentence-embedding model behind
// discovery.embeddings (both wire formats), search_tools finds the tool a
// request means when no word of the request is in it, where BM25F alone
// ranks another tool first or finds none.
func TestHybridSearchRealModel(t *testing.T) {
	t.Parallel()
	url := fixture.StartRealEmbeddings(t)
	fx := fixture.NewServers()
	var servers []*config.Server
	for name, tools := range fixture.EverydayTools() {
		fx.Define(name, tools...)
		servers = append(servers, fixture.ServerEntry(name, fixture.DeferLoading(true)))
	}
	requests := fixture.MeaningRequests()
	lexical := newTestHub(t, fixture.NewConfig(config.Discovery{Enabled: true, MaxSearchResults: 5}, servers...), fx)
	lc := connectClient(t, lexical, "")
	for _, r := range requests {
		if text, _ := lc.search(map[string]any{"query": r.Query}); strings.Contains(firstHitLine(text), r.Want) {
			t.Fatalf("BM25F alone ranks %s first for %q: not a test of the model", r.Want, r.Query)
		}
	}
	for _, provider := range []string{config.EmbeddingsOllama, config.EmbeddingsOpenAI} {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			ec := &config.Embeddings{Provider: provider, Model: fixture.RealEmbeddingsModel, BaseURL: url, Timeout: config.Duration(30 * time.Second)}
			if provider == config.EmbeddingsOpenAI {
				ec.BaseURL = url + "/v1"
			}
			cfg := fixture.NewConfig(config.Discovery{Enabled: true, MaxSearchResults: 5, Embeddings: ec}, servers...)
			h := startSemanticHub(t, cfg, fx, t.TempDir(), fixture.NewLog(t))
			vectorsReady(t, h)
			c := connectClient(t, h, "")
			for _, r := range requests {
				if text, _ := c.search(map[string]any{"query": r.Query}); !strings.Contains(firstHitLine(text), r.Want) {
					t.Errorf("%q: first hit is not %s:\n%s", r.Query, r.Want, text)
				}
			}
		})
	}
}
