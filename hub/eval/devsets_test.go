package eval

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/index"
)

// benchDir holds the benchmark sets (testdata/bench/README.md).
const benchDir = "../../testdata/bench"

type devSet struct {
	name   string
	metric func(Summary) float64
	target float64
	label  string
}

// TestDevSets guards retrieval quality on the dev queries of the benchmark
// sets in testdata/bench (skipped in -short mode). The
// floors are the issue 5 targets (etom-l2 hit@1 0.88 and hit@5 0.97,
// livemcpbench recall@5 0.40, etom-l1 hit@1 0.95), raised to the figure
// reached where it is above: livemcpbench recall@5 is 0.456 and etom-l1
// hit@1 0.967, one query above its floor (TUNING.md). etom-l2 hit@5 is
// 0.974, one query above its floor.
func TestDevSets(t *testing.T) {
	if testing.Short() {
		t.Skip("dev sets: skipped in -short mode")
	}
	sets := []devSet{
		{"etom-l2", func(s Summary) float64 { return s.HitAt1 }, 0.88, "hit@1"},
		{"etom-l2", func(s Summary) float64 { return s.HitAt5 }, 0.97, "hit@5"},
		{"livemcpbench", func(s Summary) float64 { return s.RecallAt5 }, 0.43, "recall@5"},
		{"etom-l1", func(s Summary) float64 { return s.HitAt1 }, 0.96, "hit@1"},
	}
	cache := map[string]Summary{}
	// Steps: the tasks' steps as a model that saw only the task text wrote
	// them, searched as search_tools searches queries (TUNING.md, round 4).
	sets = append(sets,
		devSet{"livemcpbench-steps", func(s Summary) float64 { return s.RecallAt5 }, 0.55, "recall@5"},
		devSet{"livemcpbench-steps", func(s Summary) float64 { return s.RecallAtLimit }, 0.62, "recall at the limit"},
	)
	for _, ds := range sets {
		s, ok := cache[ds.name]
		if !ok {
			s = runDevSet(t, ds.name, index.DefaultOptions())
			cache[ds.name] = s
			t.Logf("%s: hit@1 %.3f hit@5 %.3f hit@10 %.3f recall@5 %.3f MRR@10 %.3f nDCG@10 %.3f p50 %.0fµs p99 %.0fµs",
				ds.name, s.HitAt1, s.HitAt5, s.HitAt10, s.RecallAt5, s.MRRAt10, s.NDCGAt10, s.P50us, s.P99us)
		}
		if got := ds.metric(s); got < ds.target {
			t.Errorf("%s %s = %.3f, target %.2f", ds.name, ds.label, got, ds.target)
		}
	}
}

func runDevSet(t *testing.T, name string, opts index.Options) Summary {
	t.Helper()
	set, queries, steps := name, "queries-dev.jsonl", false
	if s, ok := strings.CutSuffix(name, "-steps"); ok {
		set, queries, steps = s, "queries-dev-steps.jsonl", true
	}
	dir := filepath.Join(benchDir, set)
	c, err := LoadCorpus(filepath.Join(dir, "corpus.json"))
	if err != nil {
		t.Fatal(err)
	}
	qs, err := LoadQueries(filepath.Join(dir, queries))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.NewWithOptions(c.Tools(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	return Run(ix, qs, Options{Steps: steps}).Summary()
}
