package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/embed"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hub/eval"
	"github.com/mcp-hub/mcp-hub/index"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

// evalCommand measures retrieval quality (and optionally token savings) of
// the tool index on a benchmark corpus, loaded exactly as the hub loads its
// catalog.
func evalCommand() *cli.Command {
	return &cli.Command{
		Name:  "eval",
		Usage: "measure search quality and token savings on a benchmark corpus",
		Description: "Loads a corpus ({\"servers\":[{name, description, tools}]}) into the search index under the hub's\n" +
			"exposed names, runs every query of a JSON-lines file ({id, query, gold:[{server, tool}]}) and prints\n" +
			"hit@k, recall@k, MRR@10, nDCG@10 and search latency. Benchmark sets live in testdata/bench/*/ in the repository (see testdata/bench/README.md).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "corpus", Usage: "corpus JSON `FILE` (e.g. testdata/bench/etom-l2/corpus.json)"},
			&cli.StringFlag{Name: "queries", Usage: "queries JSON-lines `FILE` (e.g. testdata/bench/etom-l2/queries-dev.jsonl)"},
			&cli.StringFlag{Name: "k", Value: "1,5,10", Usage: "comma-separated cut-offs for hit@k and recall@k"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
			&cli.IntFlag{Name: "misses", Usage: "print the `N` worst misses with what ranked above the gold tool"},
			&cli.StringFlag{Name: "embeddings", Usage: "also rank hybrid (BM25F fused with embeddings) through `PROVIDER:MODEL` (ollama:nomic-embed-text, openai:text-embedding-3-small; the API key, if any, from $" + embeddingsKeyEnv + "), or 'config' for discovery.embeddings of the hub config (--config), and print both"},
			&cli.StringFlag{Name: "embeddings-url", Usage: "base `URL` of the embeddings endpoint (default: the provider's)"},
			&cli.Float64Flag{Name: "vector-weight", Usage: "the vectors' `WEIGHT` in the hybrid blend, against 1 for BM25F (default: discovery.embeddings.weight with --embeddings config, else 0.5); compare a few to set discovery.embeddings.weight for your model"},
			&cli.BoolFlag{Name: "steps", Usage: "search a query that has \"steps\" by its steps, each ranked on its own and interleaved, as search_tools does with queries"},
			&cli.BoolFlag{Name: "tokens", Usage: "count the tool-definition tokens (o200k_base) of a hub over the corpus: every tool exposed vs the first tools/list with every server deferred"},
		},
		Action: runEval,
	}
}

func runEval(c *cli.Context) error {
	corpusPath, queriesPath := c.String("corpus"), c.String("queries")
	for _, f := range []struct{ name, val, example string }{
		{"corpus", corpusPath, "corpus.json"},
		{"queries", queriesPath, "queries-dev.jsonl"},
	} {
		if f.val == "" {
			return cli.Exit(fmt.Sprintf("eval: --%s is required (benchmark sets: testdata/bench/*/%s)", f.name, f.example), 2)
		}
	}
	ks, err := parseKs(c.String("k"))
	if err != nil {
		return cli.Exit("eval: --k: "+err.Error(), 2)
	}
	corpus, err := eval.LoadCorpus(corpusPath)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	queries, err := eval.LoadQueries(queriesPath)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	tools := corpus.Tools()
	start := time.Now()
	ix, err := index.New(tools)
	if err != nil {
		return fmt.Errorf("eval: build index: %w", err)
	}
	defer ix.Close()
	build := time.Since(start)

	bar := newProgress(c.App.ErrWriter)
	steps := c.Bool("steps")
	rep := eval.Run(ix, queries, eval.Options{Ks: ks, Progress: bar.update, Steps: steps})
	bar.done()

	var hybrid *eval.Report
	var hy *eval.Hybrid
	var model string
	var weight float64
	if ec, err := evalEmbeddings(c); err != nil {
		return cli.Exit("eval: "+err.Error(), 2)
	} else if ec != nil {
		client, err := embed.New(*ec, nil)
		if err != nil {
			return cli.Exit("eval: "+err.Error(), 2)
		}
		model = client.Config().Provider + ":" + client.Model()
		weight = client.Config().VectorWeight()
		dir, _ := tokenstore.DefaultDir() // "": a memory cache
		cache, err := embed.OpenCache(dir, model)
		if err != nil {
			fmt.Fprintf(c.App.ErrWriter, "eval: %v\n", err)
		}
		if hy, err = eval.NewHybrid(c.Context, ix, tools, client, cache, queries, weight); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		bar := newProgress(c.App.ErrWriter)
		hybrid = eval.Run(hy, queries, eval.Options{Ks: ks, Progress: bar.update, Steps: steps})
		bar.done()
	}

	var tokens *eval.TokenReport
	var resultTokens float64
	if c.Bool("tokens") {
		// A real hub over the corpus (in-process servers, every one
		// deferred): the definitions and results counted are the hub's
		// own.
		h, err := eval.NewHub(c.Context, corpus)
		if err != nil {
			return fmt.Errorf("eval: tokens: %w", err)
		}
		tr, err := eval.HubTokens(c.Context, h)
		if err == nil {
			resultTokens, err = eval.SearchTokens(c.Context, h, queries, steps)
		}
		h.Close()
		if err != nil {
			return fmt.Errorf("eval: tokens: %w", err)
		}
		tokens = &tr
	}

	w := c.App.Writer
	if c.Bool("json") {
		var hs *eval.Summary
		if hybrid != nil {
			s := hybrid.Summary()
			hs = &s
		}
		return printEvalJSON(w, rep.Summary(), hs, model, weight, tokens, resultTokens)
	}
	fmt.Fprintf(w, "corpus %s: %d servers, %d tools, index built in %s\n", corpusPath, len(corpus.Servers), len(tools), build.Round(time.Millisecond))
	fmt.Fprintf(w, "queries %s: %d\n", queriesPath, rep.Queries)
	if hybrid != nil {
		printSideBySide(w, rep, hybrid, hy, model, weight)
	} else {
		for _, k := range rep.Ks {
			fmt.Fprintf(w, "hit@%-3d %.3f   recall@%-3d %.3f\n", k, rep.HitAt[k], k, rep.RecallAt[k])
		}
		fmt.Fprintf(w, "MRR@10  %.3f   nDCG@10    %.3f\n", rep.MRR10, rep.NDCG10)
		sum := rep.Summary()
		fmt.Fprintf(w, "recall at search_tools' limit %.3f (%.1f tools a search on average)\n", sum.RecallAtLimit, sum.MeanLimit)
		fmt.Fprintf(w, "latency p50 %dµs   p99 %dµs\n", rep.P50.Microseconds(), rep.P99.Microseconds())
	}
	if tokens != nil {
		fmt.Fprintf(w, "tokens (o200k_base) of the tool definitions, from a hub over the corpus:\n")
		fmt.Fprintf(w, "  all tools exposed:           %d\n", tokens.AllTools)
		fmt.Fprintf(w, "  discovery, all deferred:     %d (first tools/list)\n", tokens.Discovery)
		fmt.Fprintf(w, "  saving:                      %.1f%%\n", tokens.SavingPct)
		fmt.Fprintf(w, "  a search_tools result:       %.0f (mean over the queries, every tool found newly loaded)\n", resultTokens)
	}
	if n := c.Int("misses"); n > 0 {
		printMisses(w, rep.Misses(n, 100))
	}
	return nil
}

// tokensLine is the tokens line of `mcp-hub tools`: the o200k_base tokens
// of the hub's first tools/list, and with discovery on, of every tool
// exposed for comparison.
func tokensLine(ctx context.Context, h *hub.Hub) (string, error) {
	r, err := eval.HubTokens(ctx, h)
	if err != nil {
		return "", err
	}
	if !h.Config().Discovery.Enabled {
		return fmt.Sprintf("tokens: first tools/list %s (discovery off)", thousands(r.Discovery)), nil
	}
	change := fmt.Sprintf("%.1f%% fewer", r.SavingPct)
	if r.SavingPct < 0 {
		change = fmt.Sprintf("%.1f%% more", -r.SavingPct)
	}
	return fmt.Sprintf("tokens: first tools/list %s (discovery on) vs %s with every tool exposed: %s",
		thousands(r.Discovery), thousands(r.AllTools), change), nil
}

// thousands formats n with comma separators: 56789 -> "56,789".
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

func parseKs(s string) ([]int, error) {
	var ks []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, err := strconv.Atoi(part)
		if err != nil || k <= 0 {
			return nil, fmt.Errorf("%q is not a positive integer", part)
		}
		ks = append(ks, k)
	}
	if len(ks) == 0 {
		return nil, errors.New("no cut-offs given")
	}
	return ks, nil
}

func printEvalJSON(w io.Writer, s eval.Summary, hybrid *eval.Summary, model string, weight float64, tokens *eval.TokenReport, resultTokens float64) error {
	// Marshal through a map so the token and hybrid figures join the
	// fixed keys only when asked for.
	b, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if tokens != nil || hybrid != nil {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if tokens != nil {
			m["tokens_all_tools"] = tokens.AllTools
			m["tokens_discovery"] = tokens.Discovery
			m["tokens_saving_pct"] = tokens.SavingPct
			m["tokens_search_result"] = resultTokens
		}
		if hybrid != nil {
			m["hybrid"] = hybrid
			m["hybrid_model"] = model
			m["hybrid_vector_weight"] = weight
		}
		if b, err = json.Marshal(m); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

func printMisses(w io.Writer, misses []eval.Miss) {
	if len(misses) == 0 {
		fmt.Fprintln(w, "no misses")
		return
	}
	fmt.Fprintf(w, "worst %d misses:\n", len(misses))
	for _, m := range misses {
		q := m.Query.Query
		text := q.Query
		if r := []rune(text); len(r) > 160 {
			text = string(r[:157]) + "..."
		}
		rank := "not in top 100"
		if m.Rank > 0 {
			rank = "rank " + strconv.Itoa(m.Rank)
		}
		fmt.Fprintf(w, "- %s (%s): %s\n", q.ID, rank, text)
		fmt.Fprintf(w, "    gold:  %s\n", strings.Join(m.Query.Gold, ", "))
		label := "above"
		if m.Rank == 0 {
			label = "top"
		}
		fmt.Fprintf(w, "    %s: %s\n", label, strings.Join(m.Above, ", "))
	}
}

// progress draws a bar on stderr for runs that take over a second, and only
// when stderr is a terminal (never into a log or a pipe).
type progress struct {
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
	shown bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w, start: time.Now()}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) update(done, total int) {
	if !p.tty || total == 0 {
		return
	}
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last, p.shown = now, true
	const width = 30
	filled := width * done / total
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat(" ", width-filled), done, total)
}

func (p *progress) done() {
	if p.shown {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", 50))
	}
}

// embeddingsKeyEnv holds the API key for eval --embeddings: a key on the
// command line would end up in the shell's history and in ps.
const embeddingsKeyEnv = "MCP_HUB_EMBEDDINGS_API_KEY"

// evalEmbeddings is the endpoint eval --embeddings names, with the blend
// weight of --vector-weight; nil for a lexical-only run.
func evalEmbeddings(c *cli.Context) (*config.Embeddings, error) {
	spec := c.String("embeddings")
	if spec == "" {
		if c.IsSet("vector-weight") {
			return nil, errors.New("--vector-weight needs --embeddings")
		}
		return nil, nil
	}
	var ec config.Embeddings
	if spec == "config" {
		path := configPath(c)
		cfg, err := config.Load(path, builtin.Names())
		if err != nil {
			return nil, err
		}
		if cfg.Discovery.Embeddings == nil {
			return nil, fmt.Errorf("%s sets no discovery.embeddings", path)
		}
		ec = *cfg.Discovery.Embeddings
	} else {
		provider, model, ok := strings.Cut(spec, ":")
		if !ok || model == "" {
			return nil, fmt.Errorf("--embeddings %q: write PROVIDER:MODEL, e.g. ollama:nomic-embed-text", spec)
		}
		ec = config.Embeddings{Provider: provider, Model: model, BaseURL: c.String("embeddings-url"), APIKey: os.Getenv(embeddingsKeyEnv)}
	}
	if c.IsSet("vector-weight") {
		w := c.Float64("vector-weight")
		ec.Weight = &w
	}
	if _, err := ec.Normalize(); err != nil {
		return nil, err
	}
	return &ec, nil
}

// printSideBySide prints the lexical and hybrid figures in two columns.
func printSideBySide(w io.Writer, lex, hyb *eval.Report, hy *eval.Hybrid, model string, weight float64) {
	fmt.Fprintf(w, "%-12s %8s %8s\n", "", "lexical", "hybrid")
	row := func(name string, a, b float64) { fmt.Fprintf(w, "%-12s %8.3f %8.3f\n", name, a, b) }
	for _, k := range lex.Ks {
		row(fmt.Sprintf("hit@%d", k), lex.HitAt[k], hyb.HitAt[k])
	}
	for _, k := range lex.Ks {
		row(fmt.Sprintf("recall@%d", k), lex.RecallAt[k], hyb.RecallAt[k])
	}
	row("MRR@10", lex.MRR10, hyb.MRR10)
	row("nDCG@10", lex.NDCG10, hyb.NDCG10)
	row("recall@limit", lex.Summary().RecallAtLimit, hyb.Summary().RecallAtLimit)
	fmt.Fprintf(w, "%-12s %6dµs %6dµs\n", "search p50", lex.P50.Microseconds(), hyb.P50.Microseconds())
	fmt.Fprintf(w, "%-12s %6dµs %6dµs\n", "search p99", lex.P99.Microseconds(), hyb.P99.Microseconds())
	fmt.Fprintf(w, "hybrid: %s, vector weight %g; query embedding round trip p50 %s, p99 %s (not in the search times)\n", model, weight,
		eval.Percentile(hy.RoundTrips, 50).Round(time.Microsecond), eval.Percentile(hy.RoundTrips, 99).Round(time.Microsecond))
}
