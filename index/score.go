package index

import (
	"context"
	"math"
	"sort"
	"strings"

	bindex "github.com/blevesearch/bleve_index_api"
)

// scratch holds per-search accumulators indexed by document number, so a
// search allocates nothing proportional to the catalog.
type scratch struct {
	tf      []float64 // weighted, length-normalized term frequency of the current term
	score   []float64
	inTerm  []bool // document touched by the current term
	inQuery []bool // document touched by any term
	termDoc []int32
	hits    []int32
	tfd     bindex.TermFieldDoc
}

func newScratch(n int) *scratch {
	return &scratch{
		tf:      make([]float64, n),
		score:   make([]float64, n),
		inTerm:  make([]bool, n),
		inQuery: make([]bool, n),
	}
}

// queryTerm is one analyzed query word (or a synonym of one) and its weight.
type queryTerm struct {
	term   string
	weight float64
}

// queryTerms analyzes the query: unique terms in order, plus verb synonyms
// at reduced weight, dropping words no tool contains.
func (ix *Index) queryTerms(text string) []queryTerm {
	terms := ix.analyzer.terms(text)
	inQuery := make(map[string]bool, len(terms))
	var out []queryTerm
	for _, t := range terms {
		if inQuery[t] {
			continue
		}
		inQuery[t] = true
		if _, ok := ix.terms[t]; ok {
			out = append(out, queryTerm{t, 1})
		}
	}
	for _, t := range terms {
		for _, s := range ix.synonyms[t] {
			if inQuery[s] {
				continue
			}
			inQuery[s] = true
			if _, ok := ix.terms[s]; ok {
				out = append(out, queryTerm{s, ix.opts.SynonymWeight})
			}
		}
	}
	return out
}

// Search returns up to k tools for query, best first. server restricts the
// search to one server ("" means all); an unknown server, a blank query, a
// query without any indexed word or k <= 0 give nil.
//
// Scoring is BM25F: per query term, the tool's field frequencies are
// length-normalized per field, weighted by the field boosts and summed
// before one saturation, so a word in both name and description counts more
// than in either, but not twice as much. Term weights use the non-negative
// idf log(1 + (N-n+0.5)/(n+0.5)).
func (ix *Index) Search(query, server string, k int) []Result {
	if k <= 0 || strings.TrimSpace(query) == "" || len(ix.tools) == 0 {
		return nil
	}
	sid := int32(-1)
	if server != "" {
		id, ok := ix.servers[server]
		if !ok {
			return nil
		}
		sid = id
	}
	qts := ix.queryTerms(query)
	if len(qts) == 0 {
		return nil
	}
	sc := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(sc)

	k1, b := ix.opts.K1, ix.opts.B
	n := float64(len(ix.tools))
	ctx := context.Background()
	for _, qt := range qts {
		ti := ix.terms[qt.term]
		idf := math.Log(1 + (n-float64(ti.df)+0.5)/(float64(ti.df)+0.5))
		for fi, f := range ix.fields {
			if ti.mask&(1<<fi) == 0 {
				continue
			}
			tfr, err := ix.reader.TermFieldReader(ctx, []byte(qt.term), f.name, true, false, false)
			if err != nil {
				continue
			}
			for {
				p, err := tfr.Next(&sc.tfd)
				if err != nil || p == nil {
					break
				}
				num := p.ID.Value()
				if num >= uint64(len(ix.byNum)) {
					continue
				}
				d := ix.byNum[num]
				if d < 0 || (sid >= 0 && ix.tools[d].sid != sid) {
					continue
				}
				norm := 1 - b + b*float64(ix.tools[d].length[fi])/ix.avgLen[fi]
				if !sc.inTerm[d] {
					sc.inTerm[d] = true
					sc.termDoc = append(sc.termDoc, d)
				}
				sc.tf[d] += f.boost * float64(p.Freq) / norm
			}
			_ = tfr.Close()
		}
		for _, d := range sc.termDoc {
			tf := sc.tf[d]
			sc.score[d] += qt.weight * idf * tf * (k1 + 1) / (tf + k1)
			sc.tf[d], sc.inTerm[d] = 0, false
			if !sc.inQuery[d] {
				sc.inQuery[d] = true
				sc.hits = append(sc.hits, d)
			}
		}
		sc.termDoc = sc.termDoc[:0]
	}

	hits := sc.hits
	sort.Slice(hits, func(i, j int) bool {
		a, b := hits[i], hits[j]
		if sc.score[a] != sc.score[b] {
			return sc.score[a] > sc.score[b]
		}
		// Equal scores (same text) break by name: reproducible output.
		return ix.tools[a].name < ix.tools[b].name
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	out := make([]Result, len(hits))
	for i, d := range hits {
		out[i] = Result{Name: ix.tools[d].name, Server: ix.tools[d].server, Score: sc.score[d]}
	}
	for _, d := range sc.hits {
		sc.score[d], sc.inQuery[d] = 0, false
	}
	sc.hits = sc.hits[:0]
	return out
}
