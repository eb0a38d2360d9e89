// Package eval measures the tool index the way the hub uses it: it loads a
// benchmark corpus (servers with tools) into index.New under the hub's
// exposed names, runs every query of a query set and reports hit@k,
// recall@k, MRR@10, nDCG@10 and search latency. It also counts the tokens a
// client pays for tool definitions with and without discovery.
//
// Corpus format: {"servers":[{"name","description","tools":[{"name",
// "description","inputSchema"}]}]}. Queries: JSON lines {"id","query",
// "gold":[{"server","tool"}]}, gold tools being the acceptable answers, and
// optionally "steps": the queries a model would send search_tools for the
// steps of the task (Options.Steps ranks them as search_tools does).
package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/index"
)

// Corpus is a set of servers and their tools.
type Corpus struct {
	Servers []Server `json:"servers"`
}

// Server is one upstream server of a corpus.
type Server struct {
	Name        string       `json:"name"`
	Description string       `json:"description"`
	Tools       []CorpusTool `json:"tools"`
}

// CorpusTool is one tool as an upstream lists it.
type CorpusTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// Query is one benchmark request with its acceptable tools.
type Query struct {
	ID    string   `json:"id"`
	Query string   `json:"query"`
	Gold  []Gold   `json:"gold"`
	Steps []string `json:"steps,omitempty"`
}

// Gold names a tool by server and upstream tool name.
type Gold struct {
	Server string `json:"server"`
	Tool   string `json:"tool"`
}

// LoadCorpus reads a corpus file.
func LoadCorpus(path string) (*Corpus, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read corpus: %w", err)
	}
	var c Corpus
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("parse corpus %s: %w", path, err)
	}
	if len(c.Servers) == 0 {
		return nil, fmt.Errorf("corpus %s has no servers", path)
	}
	return &c, nil
}

// LoadQueries reads a JSON-lines query file (blank lines are skipped).
func LoadQueries(path string) ([]Query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read queries: %w", err)
	}
	defer f.Close()
	qs, err := ParseQueries(f)
	if err != nil {
		return nil, fmt.Errorf("queries %s: %w", path, err)
	}
	return qs, nil
}

// ParseQueries reads JSON-lines queries from r.
func ParseQueries(r io.Reader) ([]Query, error) {
	var out []Query
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var q Query
		if err := json.Unmarshal(b, &q); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if strings.TrimSpace(q.Query) == "" || len(q.Gold) == 0 {
			return nil, fmt.Errorf("line %d (%s): query and gold are required", line, q.ID)
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, errors.New("no queries")
	}
	return out, nil
}

// Tools turns the corpus into index records under their exposed names.
func (c *Corpus) Tools() []index.Tool {
	var out []index.Tool
	for _, s := range c.Servers {
		for _, t := range s.Tools {
			out = append(out, index.Tool{
				Name:              hub.ExposedName(s.Name, t.Name),
				Server:            s.Name,
				Title:             t.Title,
				Description:       t.Description,
				InputSchema:       t.InputSchema,
				ServerDescription: s.Description,
			})
		}
	}
	return out
}

// Searcher is what Run needs from an index (index.Index implements it).
type Searcher interface {
	Search(query, server string, k int) []index.Result
}

// DefaultKs returns the default cut-offs 1, 5, 10.
func DefaultKs() []int { return []int{1, 5, 10} }

// Options for Run.
type Options struct {
	Ks       []int                 // cut-offs for hit@k and recall@k (default 1, 5, 10)
	Progress func(done, total int) // called after each query, if set
	// Steps ranks a query that has steps as search_tools ranks its
	// queries: each step on its own, the rankings interleaved
	// (index.Interleave). Queries without steps are searched as they are.
	Steps bool
}

// Report holds the metrics of one run.
type Report struct {
	Ks       []int
	HitAt    map[int]float64 // share of queries with any gold tool in the top k
	RecallAt map[int]float64 // mean share of a query's gold tools in the top k
	MRR10    float64         // mean reciprocal rank of the first gold tool within the top 10
	NDCG10   float64         // binary-relevance nDCG over the top 10
	P50, P99 time.Duration   // search latency
	Queries  int
	PerQuery []QueryResult
	searcher Searcher
	steps    bool // Options.Steps
}

// QueryResult is one query's outcome.
type QueryResult struct {
	Query    Query
	Gold     []string // exposed names
	Top      []string // ranked exposed names (top max(k, 10))
	FirstHit int      // 1-based rank of the first gold tool in Top, 0 if none
	Latency  time.Duration
	// Limit is how many tools search_tools returns for this query with the
	// default max_search_results (more for several steps:
	// index.StepsLimit).
	Limit int
}

// Run searches every query and computes the metrics.
func Run(s Searcher, queries []Query, opts Options) *Report {
	ks := opts.Ks
	if len(ks) == 0 {
		ks = DefaultKs()
	}
	ks = append([]int(nil), ks...)
	sort.Ints(ks)
	depth := max(10, ks[len(ks)-1])
	r := &Report{Ks: ks, HitAt: map[int]float64{}, RecallAt: map[int]float64{}, Queries: len(queries), searcher: s, steps: opts.Steps}
	lat := make([]time.Duration, 0, len(queries))
	for i, q := range queries {
		gold := goldNames(q.Gold)
		sent := q.searched(opts.Steps)
		res, d := timedSearch(s, sent, depth)
		lat = append(lat, d)
		top := make([]string, len(res))
		for j, h := range res {
			top[j] = h.Name
		}
		qr := QueryResult{Query: q, Gold: gold, Top: top, Latency: d, FirstHit: firstHit(top, gold, len(top)),
			Limit: index.StepsLimit(config.Discovery{}.SearchLimit(), len(sent))}
		r.PerQuery = append(r.PerQuery, qr)
		for _, k := range ks {
			if h := firstHit(top, gold, k); h > 0 {
				r.HitAt[k]++
			}
			r.RecallAt[k] += recall(top, gold, k)
		}
		if h := firstHit(top, gold, 10); h > 0 {
			r.MRR10 += 1 / float64(h)
		}
		r.NDCG10 += ndcg(top, gold, 10)
		if opts.Progress != nil {
			opts.Progress(i+1, len(queries))
		}
	}
	if n := float64(len(queries)); n > 0 {
		for _, k := range ks {
			r.HitAt[k] /= n
			r.RecallAt[k] /= n
		}
		r.MRR10 /= n
		r.NDCG10 /= n
	}
	r.P50, r.P99 = Percentile(lat, 50), Percentile(lat, 99)
	return r
}

func goldNames(gs []Gold) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range gs {
		n := hub.ExposedName(g.Server, g.Tool)
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

func isGold(name string, gold []string) bool {
	for _, g := range gold {
		if g == name {
			return true
		}
	}
	return false
}

// firstHit is the 1-based rank of the first gold tool in the top k, or 0.
func firstHit(top, gold []string, k int) int {
	for i := 0; i < k && i < len(top); i++ {
		if isGold(top[i], gold) {
			return i + 1
		}
	}
	return 0
}

func recall(top, gold []string, k int) float64 {
	if len(gold) == 0 {
		return 0
	}
	found := 0
	for i := 0; i < k && i < len(top); i++ {
		if isGold(top[i], gold) {
			found++
		}
	}
	return float64(found) / float64(len(gold))
}

// ndcg is binary-relevance nDCG@k: the ideal ranking puts min(|gold|, k)
// gold tools first.
func ndcg(top, gold []string, k int) float64 {
	var dcg, ideal float64
	for i := 0; i < k && i < len(top); i++ {
		if isGold(top[i], gold) {
			dcg += 1 / math.Log2(float64(i+2))
		}
	}
	for i := 0; i < k && i < len(gold); i++ {
		ideal += 1 / math.Log2(float64(i+2))
	}
	if ideal == 0 {
		return 0
	}
	return dcg / ideal
}

// timedRuns is how often each query is timed. A shared machine preempts a
// process now and then; the median of a few runs measures the search, not
// the scheduler, while the percentiles across queries still show slow queries.
const timedRuns = 5

// timedSearch runs one search (one query, or the interleaved steps of a
// task) timedRuns times and returns its results and median latency.
func timedSearch(s Searcher, queries []string, depth int) ([]index.Result, time.Duration) {
	var res []index.Result
	ds := make([]time.Duration, timedRuns)
	for i := range ds {
		start := time.Now()
		res = search(s, queries, depth)
		ds[i] = time.Since(start)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return res, ds[timedRuns/2]
}

// search is the best depth tools for queries: one ranking, or the steps'
// rankings, ranked at once and interleaved as search_tools does.
func search(s Searcher, queries []string, depth int) []index.Result {
	if len(queries) == 1 {
		return s.Search(queries[0], "", depth)
	}
	rankings := make([][]index.Result, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		wg.Go(func() { rankings[i] = s.Search(q, "", depth) })
	}
	wg.Wait()
	return index.Interleave(rankings, depth)
}

// searched is what a search for q sends: its steps with steps set (when it
// has some), else the query.
func (q Query) searched(steps bool) []string {
	if steps && len(q.Steps) > 0 {
		return q.Steps
	}
	return []string{q.Query}
}

// Percentile returns the p-th percentile (nearest rank) of ds.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Summary is the machine-readable form of a report (the --json output).
type Summary struct {
	HitAt1     float64 `json:"hit_at_1"`
	HitAt5     float64 `json:"hit_at_5"`
	HitAt10    float64 `json:"hit_at_10"`
	RecallAt1  float64 `json:"recall_at_1"`
	RecallAt5  float64 `json:"recall_at_5"`
	RecallAt10 float64 `json:"recall_at_10"`
	MRRAt10    float64 `json:"mrr_at_10"`
	NDCGAt10   float64 `json:"ndcg_at_10"`
	P50us      float64 `json:"p50_us"`
	P99us      float64 `json:"p99_us"`
	Queries    int     `json:"queries"`
	// RecallAtLimit is recall over as many tools as search_tools returns
	// (QueryResult.Limit: 5, and one more per further step), MeanLimit
	// that number on average.
	RecallAtLimit float64 `json:"recall_at_limit"`
	MeanLimit     float64 `json:"mean_limit"`
}

// Summary returns the fixed-key summary. Hit and recall at 1, 5 and 10 are
// computed from the ranked lists, whatever cut-offs the run used.
func (r *Report) Summary() Summary {
	at := func(f func([]string, []string, int) float64, k int) float64 {
		if len(r.PerQuery) == 0 {
			return 0
		}
		var s float64
		for _, q := range r.PerQuery {
			s += f(q.Top, q.Gold, k)
		}
		return s / float64(len(r.PerQuery))
	}
	hit := func(top, gold []string, k int) float64 {
		if firstHit(top, gold, k) > 0 {
			return 1
		}
		return 0
	}
	var atLimit, limits float64
	for _, q := range r.PerQuery {
		atLimit += recall(q.Top, q.Gold, q.Limit)
		limits += float64(q.Limit)
	}
	if n := float64(len(r.PerQuery)); n > 0 {
		atLimit, limits = atLimit/n, limits/n
	}
	return Summary{
		RecallAtLimit: atLimit, MeanLimit: limits,
		HitAt1: at(hit, 1), HitAt5: at(hit, 5), HitAt10: at(hit, 10),
		RecallAt1: at(recall, 1), RecallAt5: at(recall, 5), RecallAt10: at(recall, 10),
		MRRAt10: r.MRR10, NDCGAt10: r.NDCG10,
		P50us:   float64(r.P50.Nanoseconds()) / 1e3,
		P99us:   float64(r.P99.Nanoseconds()) / 1e3,
		Queries: r.Queries,
	}
}

// Miss is a query whose gold tool ranked low, with what ranked above it.
type Miss struct {
	Query QueryResult
	Rank  int      // 1-based rank of the first gold tool within depth, 0 when not found
	Above []string // tools ranked above the gold tool (at most 5 when not found)
}

// Misses returns the n worst queries whose first gold tool is not ranked
// first: not found at all (within depth) before found late, then by rank.
func (r *Report) Misses(n, depth int) []Miss {
	if n <= 0 {
		return nil
	}
	var out []Miss
	for _, q := range r.PerQuery {
		if q.FirstHit == 1 {
			continue
		}
		top := q.Top
		if q.FirstHit == 0 && r.searcher != nil && depth > len(top) {
			res := search(r.searcher, q.Query.searched(r.steps), depth)
			top = make([]string, len(res))
			for i, h := range res {
				top[i] = h.Name
			}
		}
		rank := firstHit(top, q.Gold, len(top))
		above := top
		if rank > 0 {
			above = top[:rank-1]
		} else if len(above) > 5 {
			above = above[:5]
		}
		out = append(out, Miss{Query: q, Rank: rank, Above: append([]string(nil), above...)})
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := out[i].Rank, out[j].Rank
		if (ri == 0) != (rj == 0) {
			return ri == 0
		}
		return ri > rj
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
