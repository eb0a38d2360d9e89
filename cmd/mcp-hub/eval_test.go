package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hub/eval"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

const (
	fixtureCorpus  = "../../hub/eval/testdata/corpus.json"
	fixtureQueries = "../../hub/eval/testdata/queries.jsonl"
)

// runEvalApp runs "mcp-hub eval ARGS" through a cli.App and returns its
// stdout, stderr and error.
func runEvalApp(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errw bytes.Buffer
	app := &cli.App{
		Name:      "mcp-hub",
		Commands:  []*cli.Command{evalCommand()},
		Writer:    &out,
		ErrWriter: &errw,
		// Keep cli.Exit from ending the test binary.
		ExitErrHandler: func(*cli.Context, error) {},
	}
	err := app.Run(append([]string{"mcp-hub", "eval"}, args...))
	return out.String(), errw.String(), err
}

func TestEvalJSON(t *testing.T) {
	out, errOut, err := runEvalApp(t, "--corpus", fixtureCorpus, "--queries", fixtureQueries, "--json")
	if err != nil {
		t.Fatalf("eval: %v (%s)", err, errOut)
	}
	if errOut != "" {
		t.Errorf("stderr not empty on a non-terminal: %q", errOut)
	}
	var m map[string]float64
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("output %q: %v", out, err)
	}
	want := map[string]float64{
		"hit_at_1": 0.625, "hit_at_5": 0.75, "hit_at_10": 0.75,
		"recall_at_1": 0.5625, "recall_at_5": 0.75, "recall_at_10": 0.75,
		"mrr_at_10": 0.6875, "queries": 8,
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %v, want %v", k, m[k], v)
		}
	}
	if len(m) != 13 {
		t.Errorf("%d keys, want 13: %v", len(m), m)
	}
	for _, k := range []string{"ndcg_at_10", "p50_us", "p99_us"} {
		if _, ok := m[k]; !ok {
			t.Errorf("missing %s", k)
		}
	}
}

func TestEvalText(t *testing.T) {
	out, _, err := runEvalApp(t, "--corpus", fixtureCorpus, "--queries", fixtureQueries, "--misses", "2", "--tokens", "--k", "1,3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"8 tools", "queries " + fixtureQueries + ": 8",
		"hit@1   0.625", "hit@3   0.750", "MRR@10  0.688",
		"latency p50", "all tools exposed:           326\n", "discovery, all deferred:     523 (first tools/list)\n", "saving:                      -60.4%\n", "a search_tools result:       ",
		"worst 2 misses:", "- q5 (not in top 100): local results", "search__brave_local_search",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "q8") {
		t.Errorf("--misses 2 printed a third miss:\n%s", out)
	}
}

func TestEvalJSONTokens(t *testing.T) {
	out, _, err := runEvalApp(t, "--corpus", fixtureCorpus, "--queries", fixtureQueries, "--json", "--tokens")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]float64
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	// Counted through a real hub over the fixture (hub/eval's tokens test).
	if m["tokens_all_tools"] != 326 || m["tokens_discovery"] != 523 {
		t.Errorf("token figures %v, %v; want 326, 523", m["tokens_all_tools"], m["tokens_discovery"])
	}
	// A search result carries at most max_search_results (5) of the 8
	// tools, each once: less than all definitions, more than nothing.
	if r := m["tokens_search_result"]; r <= 0 || r >= m["tokens_all_tools"] {
		t.Errorf("tokens_search_result = %v", r)
	}
}

func TestEvalErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no corpus", []string{"--queries", fixtureQueries}, "--corpus is required (benchmark sets: testdata/bench/*/corpus.json)"},
		{"no queries", []string{"--corpus", fixtureCorpus}, "--queries is required (benchmark sets: testdata/bench/*/queries-dev.jsonl)"},
		{"bad k", []string{"--corpus", fixtureCorpus, "--queries", fixtureQueries, "--k", "1,x"}, `--k: "x" is not a positive integer`},
		{"zero k", []string{"--corpus", fixtureCorpus, "--queries", fixtureQueries, "--k", "0"}, `"0" is not a positive integer`},
		{"missing corpus", []string{"--corpus", "nope.json", "--queries", fixtureQueries}, "read corpus"},
		{"missing queries", []string{"--corpus", fixtureCorpus, "--queries", "nope.jsonl"}, "read queries"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runEvalApp(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestParseKs(t *testing.T) {
	ks, err := parseKs(" 10, 1,5 ")
	if err != nil || len(ks) != 3 || ks[0] != 10 || ks[2] != 5 {
		t.Errorf("parseKs = %v, %v", ks, err)
	}
	if _, err := parseKs(","); err == nil {
		t.Error("empty: want error")
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 56789: "56,789", 1234567: "1,234,567", -4200: "-4,200"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestToolsTokensLine: the tokens line of `mcp-hub tools`, discovery on
// (the fixture corpus through a real hub, every server deferred: exact
// counts) and off (a builtin server: only the total, which is every tool).
func TestToolsTokensLine(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := eval.LoadCorpus(fixtureCorpus)
	if err != nil {
		t.Fatal(err)
	}
	h, err := eval.NewHub(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	line, err := tokensLine(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	// Eight small tools cost less than the meta-tools with their manifest.
	if want := "tokens: first tools/list 523 (discovery on) vs 326 with every tool exposed: 60.4% more"; line != want {
		t.Errorf("discovery on:\n got %s\nwant %s", line, want)
	}

	cfg := &config.Config{
		Servers:     map[string]*config.Server{"clock": {Upstream: config.Upstream{Name: "clock", Builtin: "time"}}},
		ServerOrder: []string{"clock"},
	}
	off, err := hub.New(ctx, cfg, hub.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Builtin: hubBuiltins(cfg, slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close()
	line, err = tokensLine(ctx, off)
	if err != nil {
		t.Fatal(err)
	}
	all, err := off.AllToolDefinitions()
	if err != nil || len(all) == 0 {
		t.Fatalf("clock definitions: %d, %v", len(all), err)
	}
	n, err := eval.CountTokens(all)
	if err != nil {
		t.Fatal(err)
	}
	if want := "tokens: first tools/list " + thousands(n) + " (discovery off)"; line != want {
		t.Errorf("discovery off:\n got %s\nwant %s", line, want)
	}
}

// TestEvalEmbeddings: eval --embeddings reports lexical and hybrid side by
// side through a local endpoint of each wire format, and a second run
// takes the tools' vectors from the cache in the state folder.
func TestEvalEmbeddings(t *testing.T) {
	t.Setenv(tokenstore.EnvStateDir, t.TempDir())
	srv := fixture.StartEmbeddings(t, nil)
	for _, tc := range []struct{ spec, url string }{
		{"ollama:test-embed", srv.URL},
		{"openai:test-embed", srv.URL + "/v1"},
	} {
		out, errOut, err := runEvalApp(t, "--corpus", fixtureCorpus, "--queries", fixtureQueries, "--embeddings", tc.spec, "--embeddings-url", tc.url)
		if err != nil {
			t.Fatalf("%s: %v (%s)", tc.spec, err, errOut)
		}
		for _, want := range []string{"lexical", "hybrid", "hit@1", "MRR@10", "hybrid: " + tc.spec, "round trip p50"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: output lacks %q:\n%s", tc.spec, want, out)
			}
		}
		_, before := srv.Requests()
		out, _, err = runEvalApp(t, "--corpus", fixtureCorpus, "--queries", fixtureQueries, "--embeddings", tc.spec, "--embeddings-url", tc.url, "--json")
		if err != nil {
			t.Fatal(err)
		}
		if _, after := srv.Requests(); after-before != 8 {
			t.Errorf("%s: the second run embedded %d texts, want the 8 queries only", tc.spec, after-before)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		h, ok := m["hybrid"].(map[string]any)
		if !ok || h["queries"] != 8.0 || m["hybrid_model"] != tc.spec || m["hybrid_vector_weight"] != 0.5 {
			t.Errorf("%s: --json hybrid figures: %v", tc.spec, m)
		}
	}
	// --vector-weight is the blend's: at the most the vectors lead, and
	// the ranking is theirs (the stand-in model is much weaker than BM25F).
	hybridMRR := func(args ...string) float64 {
		t.Helper()
		out, errOut, err := runEvalApp(t, append([]string{"--corpus", fixtureCorpus, "--queries", fixtureQueries, "--embeddings", "ollama:test-embed", "--embeddings-url", srv.URL, "--json"}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v (%s)", args, err, errOut)
		}
		var m struct {
			Weight float64            `json:"hybrid_vector_weight"`
			Hybrid map[string]float64 `json:"hybrid"`
		}
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		want := 0.5
		if len(args) > 1 {
			want, _ = strconv.ParseFloat(args[1], 64)
		}
		if m.Weight != want {
			t.Errorf("%v: hybrid_vector_weight %v, want %v", args, m.Weight, want)
		}
		return m.Hybrid["mrr_at_10"]
	}
	if low, high := hybridMRR(), hybridMRR("--vector-weight", "10"); low == high {
		t.Errorf("--vector-weight 10 ranked as the default does (MRR@10 %.3f)", low)
	}
	for _, args := range [][]string{
		{"--embeddings", "ollama"}, // no model
		{"--embeddings", "ollama:m", "--vector-weight", "0"},
		{"--embeddings", "ollama:m", "--vector-weight", "11"},
		{"--vector-weight", "1"}, // without embeddings
	} {
		if _, _, err := runEvalApp(t, append([]string{"--corpus", fixtureCorpus, "--queries", fixtureQueries}, args...)...); err == nil {
			t.Errorf("%v was accepted", args)
		}
	}

	// --embeddings config takes the endpoint of the hub config.
	corpus, _ := filepath.Abs(fixtureCorpus)
	queries, _ := filepath.Abs(fixtureQueries)
	t.Chdir(t.TempDir())
	cfg := "hub.yaml"
	doc := "servers:\n  time: {builtin: time}\ndiscovery:\n  enabled: true\n  embeddings:\n    provider: openai\n    model: from-config\n    base_url: " + srv.URL + "/v1\n    weight: 0.25\n"
	if err := os.WriteFile(cfg, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "hybrid: openai:from-config, vector weight 0.25;"},
		{[]string{"--vector-weight", "2"}, "hybrid: openai:from-config, vector weight 2;"},
	} {
		out, errOut, err := runEvalApp(t, append([]string{"--corpus", corpus, "--queries", queries, "--embeddings", "config"}, tc.args...)...)
		if err != nil || !strings.Contains(out, tc.want) {
			t.Errorf("--embeddings config %v: err %v (%s), output:\n%s", tc.args, err, errOut, out)
		}
	}
	if err := os.WriteFile(cfg, []byte("servers:\n  time: {builtin: time}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runEvalApp(t, "--corpus", corpus, "--queries", queries, "--embeddings", "config"); err == nil {
		t.Error("--embeddings config without discovery.embeddings was accepted")
	}
}
