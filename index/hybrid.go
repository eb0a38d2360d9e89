package index

import (
	"container/heap"
	"fmt"
	"math"
	"math/bits"
	"sort"
	"strings"
)

// Hybrid ranking: the lexical (BM25F) ranking blended with the cosine
// similarity of embedding vectors. The candidates are the best FusionDepth
// of each ranking; a candidate's score is
//
//	BM25F/best BM25F + weight × (cos - min)/(max - min)
//
// with its BM25F 0 when only the vectors found it, and min and max the
// cosines among the candidates. A linear blend keeps BM25F's own margins:
// a confident lexical first stays first unless the vectors disagree
// strongly. Reciprocal-rank fusion, measured first, flattened them (with
// its usual k of 60, lexical ranks 1 and 10 differ by 13%), so that any
// tool both rankings listed beat the lexical best (TUNING.md).
const (
	// FusionDepth is how many tools of each ranking are candidates.
	FusionDepth = 30
	// DefaultVectorWeight is the blend's weight of the vectors. Half of
	// BM25F's: every model measured ranks the benchmark sets below BM25F
	// on its own, and an equal weight cost more than it brought; a
	// smaller one leaves a tool that only the vectors find (a request with
	// no word of the tool's) too far below the lexical candidates to be
	// shown (TUNING.md).
	DefaultVectorWeight = 0.5
	// MaxVectorWeight bounds the weight: at 10 the vectors lead, and
	// BM25F mostly orders tools they find about equally similar.
	MaxVectorWeight = 10
)

// maxEmbedTextBytes bounds a tool's embedding text: models truncate at a
// few hundred tokens anyway, and the description's start says what the
// tool does.
const maxEmbedTextBytes = 2000

// EmbedText is the text an embedding model gets for a tool: its name split
// into words, title, description and parameter names.
func EmbedText(t Tool) string {
	var b strings.Builder
	var words []string
	(&analyzer{}).words(baseName(t.Name, t.Server), func(w string) { words = append(words, w) })
	b.WriteString(strings.Join(words, " "))
	if t.Title != "" {
		b.WriteString(". ")
		b.WriteString(t.Title)
	}
	if d := strings.Join(strings.Fields(t.Description), " "); d != "" {
		b.WriteString(". ")
		b.WriteString(d)
	}
	if names, _ := schemaText(t.InputSchema); strings.TrimSpace(names) != "" {
		b.WriteString(". Parameters: ")
		b.WriteString(strings.Join(strings.Fields(names), ", "))
	}
	s := b.String()
	if len(s) > maxEmbedTextBytes {
		cut := maxEmbedTextBytes
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut]
	}
	return s
}

// Vectors are the tools' embeddings, in the index's order, from one model.
//
// Ranking a catalog by exact cosine costs tools × dimensions
// multiply-adds: several milliseconds at 10,000 tools of 768 dimensions.
// So each vector is also kept as one bit per dimension, the sign of its
// difference from the catalog's mean vector; a query first ranks every tool
// by the Hamming distance of those bits (a few words of XOR and popcount per
// tool), and only the best oversample × depth are ranked by exact cosine.
type Vectors struct {
	ix     *Index
	weight float64 // of the vectors in the blend
	dim    int
	docs   [][]float32
	mean   []float32
	words  int      // uint64 words per signature
	sigs   []uint64 // tool d's signature is sigs[d*words : (d+1)*words]
}

// oversample is how many Hamming candidates per wanted result get an exact
// cosine: sign bits of centred vectors keep the true nearest among the
// first few times as many (TUNING.md).
const oversample = 4

// exactUpTo: a catalog of at most exactUpTo × the candidates wanted is
// ranked by exact cosine alone. Above that the signatures are faster, on
// small catalogs too (TUNING.md, round 8).
const exactUpTo = 2

// NewVectors pairs the index with one unit vector per tool, in the order
// of the tools the index was built from (the vector of EmbedText(tool)),
// and with the weight of their similarity in the blend (above 0, at most
// MaxVectorWeight; DefaultVectorWeight unless a measurement of the model
// says otherwise).
func (ix *Index) NewVectors(vecs [][]float32, weight float64) (*Vectors, error) {
	if len(vecs) != len(ix.tools) {
		return nil, fmt.Errorf("index: %d vectors for %d tools", len(vecs), len(ix.tools))
	}
	if !(weight > 0 && weight <= MaxVectorWeight) {
		return nil, fmt.Errorf("index: vector weight %g is not in (0, %d]", weight, MaxVectorWeight)
	}
	v := &Vectors{ix: ix, weight: weight, docs: vecs}
	for i, x := range vecs {
		if i == 0 {
			v.dim = len(x)
		}
		if len(x) == 0 || len(x) != v.dim {
			return nil, fmt.Errorf("index: vector %d has %d dimensions, want %d", i, len(x), v.dim)
		}
	}
	if len(vecs) == 0 {
		return v, nil
	}
	v.mean = make([]float32, v.dim)
	for _, x := range vecs {
		for j, f := range x {
			v.mean[j] += f
		}
	}
	for j := range v.mean {
		v.mean[j] /= float32(len(vecs))
	}
	v.words = (v.dim + 63) / 64
	v.sigs = make([]uint64, len(vecs)*v.words)
	for d, x := range vecs {
		v.signature(x, v.sigs[d*v.words:(d+1)*v.words])
	}
	return v, nil
}

// signature sets one bit per dimension where x is above the mean.
func (v *Vectors) signature(x []float32, out []uint64) {
	for j, f := range x {
		if f > v.mean[j] {
			out[j/64] |= 1 << (j % 64)
		}
	}
}

// Dim is the vectors' dimension.
func (v *Vectors) Dim() int { return v.dim }

// SearchHybrid ranks like Search, fused with the tools' similarity to the
// query's unit vector qv (see the blend above). Without usable vectors
// (nil, another index's, another dimension) it is Search.
func (ix *Index) SearchHybrid(query string, qv []float32, v *Vectors, server string, k int) []Result {
	if v == nil || v.ix != ix || len(qv) != v.dim {
		return ix.Search(query, server, k)
	}
	sid, ok := ix.serverID(server)
	if !ok || k <= 0 || strings.TrimSpace(query) == "" || len(ix.tools) == 0 {
		return nil
	}
	depth := max(k, FusionDepth)
	lex, lexScores := ix.lexical(query, sid, depth)
	vec := v.nearest(qv, sid, depth)
	fused := make(map[int32]float64, len(lex)+len(vec))
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, list := range [][]int32{lex, vec} {
		for _, d := range list {
			if _, ok := fused[d]; !ok {
				c := float64(dot(qv, v.docs[d]))
				fused[d] = c
				lo, hi = min(lo, c), max(hi, c)
			}
		}
	}
	for d, c := range fused {
		n := 0.0
		if hi > lo {
			n = (c - lo) / (hi - lo)
		}
		fused[d] = v.weight * n
	}
	for i, d := range lex {
		fused[d] += lexScores[i] / lexScores[0]
	}
	for d, f := range fused {
		if f <= 0 {
			delete(fused, d) // the least similar candidate, and no word in common
		}
	}
	docs := make([]int32, 0, len(fused))
	for d := range fused {
		docs = append(docs, d)
	}
	sort.Slice(docs, func(i, j int) bool {
		a, b := docs[i], docs[j]
		if fused[a] != fused[b] {
			return fused[a] > fused[b]
		}
		return ix.tools[a].name < ix.tools[b].name
	})
	docs = docs[:min(k, len(docs))]
	scores := make([]float64, len(docs))
	for i, d := range docs {
		scores[i] = fused[d]
	}
	return ix.results(docs, scores)
}

// nearest is the k tools of server sid (-1: all) most similar to qv, best
// first.
func (v *Vectors) nearest(qv []float32, sid int32, k int) []int32 {
	cands := v.candidates(qv, sid, k*oversample)
	h := &simHeap{}
	for _, d := range cands {
		s := dot(qv, v.docs[d])
		if len(h.docs) < k {
			heap.Push(h, simHit{d, s})
		} else if s > h.docs[0].sim {
			h.docs[0] = simHit{d, s}
			heap.Fix(h, 0)
		}
	}
	sort.Slice(h.docs, func(i, j int) bool {
		if h.docs[i].sim != h.docs[j].sim {
			return h.docs[i].sim > h.docs[j].sim
		}
		return h.docs[i].doc < h.docs[j].doc
	})
	out := make([]int32, len(h.docs))
	for i, x := range h.docs {
		out[i] = x.doc
	}
	return out
}

// candidates are the tools of server sid whose signatures are closest to
// the query's: at least n of them (ties at the cut included), or every
// tool of a small catalog.
func (v *Vectors) candidates(qv []float32, sid int32, n int) []int32 {
	tools := v.ix.tools
	if len(tools) <= exactUpTo*n || v.dim >= math.MaxUint16 {
		out := make([]int32, 0, len(tools))
		for d := range tools {
			if sid < 0 || tools[d].sid == sid {
				out = append(out, int32(d))
			}
		}
		return out
	}
	q := make([]uint64, v.words)
	v.signature(qv, q)
	// Distances are at most dim: a histogram finds the cut in one pass.
	dist := make([]uint16, len(tools))
	hist := make([]int32, v.dim+1)
	for d := range tools {
		if sid >= 0 && tools[d].sid != sid {
			dist[d] = math.MaxUint16
			continue
		}
		sig := v.sigs[d*v.words : (d+1)*v.words]
		h := 0
		for w, x := range sig {
			h += bits.OnesCount64(x ^ q[w])
		}
		dist[d] = uint16(h)
		hist[h]++
	}
	cut, seen := 0, int32(0)
	for ; cut < len(hist); cut++ {
		seen += hist[cut]
		if seen >= int32(n) {
			break
		}
	}
	// Everything closer than the cut, then ties at the cut up to n.
	out := make([]int32, 0, n)
	ties := n - int(seen-hist[min(cut, len(hist)-1)])
	for d, h := range dist {
		switch {
		case int(h) < cut:
			out = append(out, int32(d))
		case int(h) == cut && ties > 0:
			out = append(out, int32(d))
			ties--
		}
	}
	return out
}

// dot is the dot product of two vectors of one length (the cosine of unit
// vectors), unrolled: it is the inner loop of a vector ranking.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i]*b[i] + a[i+4]*b[i+4]
		s1 += a[i+1]*b[i+1] + a[i+5]*b[i+5]
		s2 += a[i+2]*b[i+2] + a[i+6]*b[i+6]
		s3 += a[i+3]*b[i+3] + a[i+7]*b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

type simHit struct {
	doc int32
	sim float32
}

// simHeap is a min-heap by similarity: its root is the worst kept.
type simHeap struct{ docs []simHit }

func (h *simHeap) Len() int           { return len(h.docs) }
func (h *simHeap) Less(i, j int) bool { return h.docs[i].sim < h.docs[j].sim }
func (h *simHeap) Swap(i, j int)      { h.docs[i], h.docs[j] = h.docs[j], h.docs[i] }
func (h *simHeap) Push(x any)         { h.docs = append(h.docs, x.(simHit)) }
func (h *simHeap) Pop() any {
	x := h.docs[len(h.docs)-1]
	h.docs = h.docs[:len(h.docs)-1]
	return x
}
