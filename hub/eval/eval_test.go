package eval

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/index"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func loadFixture(t *testing.T) (*Corpus, []Query) {
	t.Helper()
	c, err := LoadCorpus("testdata/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := LoadQueries("testdata/queries.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return c, qs
}

// TestRunFixture runs the real index on the fixture. Ranks (checked by
// hand): q1, q2, q3, q6 gold first; q4 both gold tools first and second;
// q8 gold second; q5 and q7 gold not found.
func TestRunFixture(t *testing.T) {
	c, qs := loadFixture(t)
	ix, err := index.New(c.Tools())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	s := Run(ix, qs, Options{}).Summary()
	want := Summary{
		HitAt1: 5.0 / 8, HitAt5: 6.0 / 8, HitAt10: 6.0 / 8,
		RecallAt1: 4.5 / 8, RecallAt5: 6.0 / 8, RecallAt10: 6.0 / 8,
		MRRAt10:  5.5 / 8,
		NDCGAt10: (5 + 1/math.Log2(3)) / 8,
		Queries:  8,
	}
	got := s
	got.P50us, got.P99us = 0, 0
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"hit@1", got.HitAt1, want.HitAt1}, {"hit@5", got.HitAt5, want.HitAt5}, {"hit@10", got.HitAt10, want.HitAt10},
		{"recall@1", got.RecallAt1, want.RecallAt1}, {"recall@5", got.RecallAt5, want.RecallAt5}, {"recall@10", got.RecallAt10, want.RecallAt10},
		{"mrr@10", got.MRRAt10, want.MRRAt10}, {"ndcg@10", got.NDCGAt10, want.NDCGAt10},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if got.Queries != 8 {
		t.Errorf("queries = %d, want 8", got.Queries)
	}
	if s.P50us <= 0 || s.P99us < s.P50us {
		t.Errorf("latency p50 %v p99 %v", s.P50us, s.P99us)
	}
}

func TestMissesFixture(t *testing.T) {
	c, qs := loadFixture(t)
	ix, err := index.New(c.Tools())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	misses := Run(ix, qs, Options{}).Misses(10, 100)
	var ids []string
	for _, m := range misses {
		ids = append(ids, m.Query.Query.ID)
	}
	// Not found first (q5, q7 in input order), then found late (q8).
	if got := strings.Join(ids, ","); got != "q5,q7,q8" {
		t.Fatalf("misses = %s, want q5,q7,q8", got)
	}
	if m := misses[2]; m.Rank != 2 || len(m.Above) != 1 || m.Above[0] != "weather__get_forecast" {
		t.Errorf("q8 miss = rank %d above %v", m.Rank, m.Above)
	}
	if m := misses[0]; m.Rank != 0 || len(m.Above) != 1 || m.Above[0] != "search__brave_local_search" {
		t.Errorf("q5 miss = rank %d above %v", m.Rank, m.Above)
	}
	if got := Run(ix, qs, Options{}).Misses(1, 100); len(got) != 1 {
		t.Errorf("Misses(1) returned %d", len(got))
	}
}

// fakeSearcher returns fixed rankings, to check the metrics in isolation.
type fakeSearcher map[string][]string

func (f fakeSearcher) Search(q, _ string, k int) []index.Result {
	var out []index.Result
	for _, n := range f[q] {
		out = append(out, index.Result{Name: n})
	}
	if len(out) > k {
		out = out[:k]
	}
	return out
}

func TestMetrics(t *testing.T) {
	g := func(names ...string) []Gold {
		var out []Gold
		for _, n := range names {
			out = append(out, Gold{Server: "s", Tool: n})
		}
		return out
	}
	tests := []struct {
		name    string
		ranking []string
		gold    []Gold
		want    Summary
	}{
		{"first", []string{"s__a", "s__b"}, g("a"),
			Summary{HitAt1: 1, HitAt5: 1, HitAt10: 1, RecallAt1: 1, RecallAt5: 1, RecallAt10: 1, MRRAt10: 1, NDCGAt10: 1, Queries: 1}},
		{"third", []string{"s__x", "s__y", "s__a"}, g("a"),
			Summary{HitAt5: 1, HitAt10: 1, RecallAt5: 1, RecallAt10: 1, MRRAt10: 1.0 / 3, NDCGAt10: 0.5, Queries: 1}},
		{"sixth", []string{"s__1", "s__2", "s__3", "s__4", "s__5", "s__a"}, g("a"),
			Summary{HitAt10: 1, RecallAt10: 1, MRRAt10: 1.0 / 6, NDCGAt10: 1 / math.Log2(7), Queries: 1}},
		{"two gold, one found", []string{"s__a", "s__x"}, g("a", "b"),
			Summary{HitAt1: 1, HitAt5: 1, HitAt10: 1, RecallAt1: 0.5, RecallAt5: 0.5, RecallAt10: 0.5, MRRAt10: 1,
				NDCGAt10: 1 / (1 + 1/math.Log2(3)), Queries: 1}},
		{"duplicate gold counted once", []string{"s__a"}, g("a", "a"),
			Summary{HitAt1: 1, HitAt5: 1, HitAt10: 1, RecallAt1: 1, RecallAt5: 1, RecallAt10: 1, MRRAt10: 1, NDCGAt10: 1, Queries: 1}},
		{"not found", []string{"s__x"}, g("a"), Summary{Queries: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := Run(fakeSearcher{"q": tc.ranking}, []Query{{ID: "1", Query: "q", Gold: tc.gold}}, Options{}).Summary()
			s.P50us, s.P99us = 0, 0
			a, _ := json.Marshal(s)
			for _, f := range []struct{ got, want float64 }{
				{s.HitAt1, tc.want.HitAt1}, {s.HitAt5, tc.want.HitAt5}, {s.HitAt10, tc.want.HitAt10},
				{s.RecallAt1, tc.want.RecallAt1}, {s.RecallAt5, tc.want.RecallAt5}, {s.RecallAt10, tc.want.RecallAt10},
				{s.MRRAt10, tc.want.MRRAt10}, {s.NDCGAt10, tc.want.NDCGAt10},
			} {
				if !near(f.got, f.want) {
					b, _ := json.Marshal(tc.want)
					t.Fatalf("got %s\nwant %s", a, b)
				}
			}
		})
	}
}

// With Options.Steps a query's steps are ranked on their own and
// interleaved, and recall at the limit counts one more tool per further
// step; without it, the query itself is searched.
func TestRunSteps(t *testing.T) {
	f := fakeSearcher{
		"task":  {"s__x1", "s__x2", "s__x3", "s__x4", "s__x5", "s__x6", "s__a"},
		"step1": {"s__y1", "s__y2", "s__y3", "s__y4", "s__y5", "s__a"},
		"step2": {"s__b", "s__z1"},
	}
	qs := []Query{{ID: "1", Query: "task", Steps: []string{"step1", "step2"}, Gold: []Gold{{"s", "a"}, {"s", "b"}}}}
	whole := Run(f, qs, Options{}).Summary()
	if whole.RecallAt5 != 0 || whole.RecallAt10 != 0.5 || whole.RecallAtLimit != 0 || whole.MeanLimit != 5 {
		t.Errorf("without steps: %+v", whole)
	}
	// Interleaved: y1 b y2 z1 y3 y4 y5 a.
	steps := Run(f, qs, Options{Steps: true}).Summary()
	if steps.RecallAt1 != 0 || steps.RecallAt5 != 0.5 || steps.RecallAt10 != 1 || steps.MeanLimit != 6 || steps.RecallAtLimit != 0.5 {
		t.Errorf("with steps: %+v", steps)
	}
}

func TestRunKsAndProgress(t *testing.T) {
	f := fakeSearcher{"q": {"s__x", "s__x2", "s__a"}}
	calls := 0
	r := Run(f, []Query{{ID: "1", Query: "q", Gold: []Gold{{"s", "a"}}}}, Options{Ks: []int{3, 2}, Progress: func(done, total int) {
		calls++
		if done != 1 || total != 1 {
			t.Errorf("progress %d/%d", done, total)
		}
	}})
	if calls != 1 {
		t.Errorf("progress called %d times", calls)
	}
	if r.Ks[0] != 2 || r.HitAt[2] != 0 || r.HitAt[3] != 1 {
		t.Errorf("ks %v hit %v", r.Ks, r.HitAt)
	}
}

func TestSummaryJSONKeys(t *testing.T) {
	b, err := json.Marshal(Summary{})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := []string{"hit_at_1", "hit_at_5", "hit_at_10", "recall_at_1", "recall_at_5", "recall_at_10",
		"mrr_at_10", "ndcg_at_10", "p50_us", "p99_us", "queries", "recall_at_limit", "mean_limit"}
	if len(m) != len(want) {
		t.Errorf("keys %v, want %v", m, want)
	}
	for _, k := range want {
		if _, ok := m[k]; !ok {
			t.Errorf("missing key %s", k)
		}
	}
}

// TestCorpusNames: corpus tools and gold labels are named by the hub's own
// rule (hub.ExposedName, tested in package hub), long names included.
func TestCorpusNames(t *testing.T) {
	server, tool := "a very long server name.with dots", "export_spreadsheet_to_comma_separated_values_file"
	c := &Corpus{Servers: []Server{{Name: server, Tools: []CorpusTool{{Name: tool}}}}}
	want := hub.ExposedName(server, tool)
	if got := c.Tools()[0].Name; got != want || len(got) != 64 {
		t.Errorf("tool name %q, want %q (64 characters)", got, want)
	}
	if got := goldNames([]Gold{{Server: server, Tool: tool}}); len(got) != 1 || got[0] != want {
		t.Errorf("gold names %q, want [%q]", got, want)
	}
}

func TestParseQueriesErrors(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"bad json", "{"},
		{"no gold", `{"id":"1","query":"x","gold":[]}`},
		{"blank query", `{"id":"1","query":" ","gold":[{"server":"s","tool":"t"}]}`},
	}
	for _, tc := range tests {
		if _, err := ParseQueries(strings.NewReader(tc.in)); err == nil {
			t.Errorf("%s: want error", tc.name)
		}
	}
	qs, err := ParseQueries(strings.NewReader("\n" + `{"id":"1","query":"x","gold":[{"server":"s","tool":"t"}]}` + "\n\n"))
	if err != nil || len(qs) != 1 {
		t.Errorf("got %v, %v", qs, err)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := LoadCorpus("testdata/missing.json"); err == nil {
		t.Error("missing corpus: want error")
	}
	if _, err := LoadQueries("testdata/missing.jsonl"); err == nil {
		t.Error("missing queries: want error")
	}
	if _, err := LoadCorpus("testdata/queries.jsonl"); err == nil {
		t.Error("queries as corpus: want error")
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	if got := Percentile(ds, 50); got != 5 {
		t.Errorf("p50 = %v", got)
	}
	if got := Percentile(ds, 99); got != 10 {
		t.Errorf("p99 = %v", got)
	}
	if got := Percentile(nil, 50); got != 0 {
		t.Errorf("empty = %v", got)
	}
}
