package index

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// benchCorpusDir holds the ETOM corpus (testdata/bench/README.md).
// testdata/corpus.json, in the same format, keeps the loader and the
// repetition under a fast unit test.
var benchCorpusDir = filepath.Join("..", "testdata", "bench", "etom-l2")

type corpusFile struct {
	Servers []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
		Tools       []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	} `json:"servers"`
}

// loadCorpusTools reads a corpus file and repeats it, renaming servers
// (name~2, name~3, ...), until it has exactly n tools.
func loadCorpusTools(tb testing.TB, path string, n int) []Tool {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("benchmark corpus: %v (it is part of the repository: testdata/bench/etom-l2)", err)
	}
	var c corpusFile
	if err := json.Unmarshal(b, &c); err != nil {
		tb.Fatalf("parse %s: %v", path, err)
	}
	var out []Tool
	for copyN := 1; len(out) < n; copyN++ {
		before := len(out)
		for _, s := range c.Servers {
			server := s.Name
			if copyN > 1 {
				server = fmt.Sprintf("%s~%d", s.Name, copyN)
			}
			for _, t := range s.Tools {
				if len(out) == n {
					return out
				}
				out = append(out, Tool{Name: server + "__" + t.Name, Server: server, Description: t.Description,
					InputSchema: t.InputSchema, ServerDescription: s.Description})
			}
		}
		if len(out) == before {
			tb.Fatalf("corpus %s has no tools", path)
		}
	}
	return out
}

func loadBenchQueries(tb testing.TB, path string) []string {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Skipf("benchmark queries not available: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct {
			Query string `json:"query"`
		}
		if json.Unmarshal(sc.Bytes(), &q) == nil && q.Query != "" {
			out = append(out, q.Query)
		}
	}
	if len(out) == 0 {
		tb.Fatalf("no queries in %s", path)
	}
	return out
}

// TestCorpusRepetition checks the benchmark loader on the local fixture:
// servers are repeated under new names until exactly n tools, and the
// copies are searchable and filterable like the originals.
func TestCorpusRepetition(t *testing.T) {
	tools := loadCorpusTools(t, filepath.Join("testdata", "corpus.json"), 20)
	if len(tools) != 20 {
		t.Fatalf("%d tools, want 20", len(tools))
	}
	seen := map[string]bool{}
	for _, tl := range tools {
		if seen[tl.Name] {
			t.Fatalf("duplicate name %s", tl.Name)
		}
		seen[tl.Name] = true
	}
	ix := mustNew(t, tools)
	if ix.Len() != 20 {
		t.Errorf("Len = %d", ix.Len())
	}
	got := ix.Search("weather forecast", "weather~2", 5)
	if first(got) != "weather~2__get_forecast" {
		t.Errorf("copy search = %v", names(got))
	}
	if all := ix.Search("multiply numbers", "", 10); len(all) < 3 || !strings.HasSuffix(first(all), "__multiply") {
		t.Errorf("search over copies = %v", names(all))
	}
}

func benchBuild(b *testing.B, n int) {
	tools := loadCorpusTools(b, filepath.Join(benchCorpusDir, "corpus.json"), n)
	b.ResetTimer()
	for b.Loop() {
		ix, err := New(tools)
		if err != nil {
			b.Fatal(err)
		}
		_ = ix.Close()
	}
}

func benchSearch(b *testing.B, n int) {
	tools := loadCorpusTools(b, filepath.Join(benchCorpusDir, "corpus.json"), n)
	queries := loadBenchQueries(b, filepath.Join(benchCorpusDir, "queries-dev.jsonl"))
	ix, err := New(tools)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	lat := make([]time.Duration, 0, 1024)
	i := 0
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		ix.Search(queries[i%len(queries)], "", 5)
		lat = append(lat, time.Since(start))
		i++
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	pct := func(p float64) float64 {
		r := int(p / 100 * float64(len(lat)))
		r = min(max(r, 0), len(lat)-1)
		return float64(lat[r].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(50), "p50-µs")
	b.ReportMetric(pct(99), "p99-µs")
}

func BenchmarkBuild1k(b *testing.B)  { benchBuild(b, 1000) }
func BenchmarkBuild10k(b *testing.B) { benchBuild(b, 10000) }
func BenchmarkSearch1k(b *testing.B) { benchSearch(b, 1000) }
func BenchmarkSearch10k(b *testing.B) {
	benchSearch(b, 10000)
}

// randomVectors are n unit vectors of dim dimensions around a few dozen
// directions (embeddings of a catalog cluster by topic), seeded.
func randomVectors(n, dim int, seed uint64) [][]float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	centres := make([][]float32, 40)
	for i := range centres {
		centres[i] = make([]float32, dim)
		for j := range centres[i] {
			centres[i][j] = float32(r.NormFloat64())
		}
	}
	out := make([][]float32, n)
	for i := range out {
		c := centres[r.IntN(len(centres))]
		v := make([]float32, dim)
		var norm float64
		for j := range v {
			v[j] = c[j] + 1.5*float32(r.NormFloat64())
			norm += float64(v[j] * v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(norm))
		}
		out[i] = v
	}
	return out
}

// benchHybrid times SearchHybrid against Search on the same queries: the
// added time is what fusion and the vector ranking cost (the endpoint's
// round trip for the query vector is not in it).
func benchHybrid(b *testing.B, n, dim int) {
	tools := loadCorpusTools(b, filepath.Join(benchCorpusDir, "corpus.json"), n)
	queries := loadBenchQueries(b, filepath.Join(benchCorpusDir, "queries-dev.jsonl"))
	ix, err := New(tools)
	if err != nil {
		b.Fatal(err)
	}
	v, err := ix.NewVectors(randomVectors(n, dim, 1), DefaultVectorWeight)
	if err != nil {
		b.Fatal(err)
	}
	qvs := randomVectors(len(queries), dim, 2)
	var lex, hyb []time.Duration
	i := 0
	b.ResetTimer()
	for b.Loop() {
		q := i % len(queries)
		start := time.Now()
		ix.Search(queries[q], "", 5)
		mid := time.Now()
		ix.SearchHybrid(queries[q], qvs[q], v, "", 5)
		hyb = append(hyb, time.Since(mid))
		lex = append(lex, mid.Sub(start))
		i++
	}
	b.StopTimer()
	pct := func(lat []time.Duration, p float64) float64 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		r := min(max(int(p/100*float64(len(lat))), 0), len(lat)-1)
		return float64(lat[r].Nanoseconds()) / 1e3
	}
	b.ReportMetric(pct(lex, 50), "lexical-p50-µs")
	b.ReportMetric(pct(lex, 99), "lexical-p99-µs")
	b.ReportMetric(pct(hyb, 50), "hybrid-p50-µs")
	b.ReportMetric(pct(hyb, 99), "hybrid-p99-µs")
}

func BenchmarkHybrid10k768(b *testing.B) { benchHybrid(b, 10000, 768) }
func BenchmarkHybrid2k384(b *testing.B)  { benchHybrid(b, 2375, 384) }
