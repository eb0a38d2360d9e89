package index

import (
	"container/heap"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/mcp-hub/mcp-hub/internal/clean"
)

// MaxQueryBytes is how much of a query is ranked: its first 16 KiB, cut at
// a character boundary, about 2,500 words. A request for tools is far
// shorter; analysing every word of a 4 MiB one cost 1-1.5 s of CPU at
// 10,000 tools, which any client could have asked for again and again.
const MaxQueryBytes = 16 << 10

// scratch holds per-search accumulators indexed by document number, so a
// search allocates nothing proportional to the catalog.
type scratch struct {
	score []float64
	seen  []bool
	hits  []int32
}

func newScratch(n int) *scratch {
	return &scratch{score: make([]float64, n), seen: make([]bool, n)}
}

// queryTerm is one analyzed query word (or a synonym of one) and its weight.
type queryTerm struct {
	id     int32 // term ID
	weight float64
}

// queryTerms analyzes the query: unique terms in order, then word pairs,
// pairs with a synonym in place of one word, verb synonyms and stem
// variants at reduced weight, dropping terms no tool contains. A
// term keeps the weight it is first added with: a word of the query is
// never demoted to a synonym or variant of another. It also returns the
// query's words in order, a file path read as "file" (Options.FilePaths).
func (ix *Index) queryTerms(text string) ([]queryTerm, []string) {
	if ix.opts.FilePaths {
		text = markFilePaths(text)
	}
	terms := ix.analyzer.queryTerms(text)
	inQuery := make(map[termKey]bool, len(terms))
	var out []queryTerm
	add := func(k termKey, weight float64) {
		if inQuery[k] {
			return
		}
		inQuery[k] = true
		if id, ok := ix.termIDs[k]; ok {
			out = append(out, queryTerm{id, weight})
		}
	}
	words := terms // the words themselves, without path markers
	for i, t := range terms {
		if t == fileMarker {
			// A path implies the word "file": at full weight in word
			// pairs, and alone at synonym weight (below), since at full
			// weight it ranked any file tool (TUNING.md).
			if len(words) == len(terms) {
				words = slices.Clone(terms)
				words = slices.DeleteFunc(words, func(w string) bool { return w == fileMarker })
			}
			terms[i] = "file"
			continue
		}
		add(termKey{a: t}, 1)
	}
	if len(words) < len(terms) {
		add(termKey{a: "file"}, ix.opts.SynonymWeight)
	}
	if ix.opts.Bigrams > 0 {
		for i := 1; i < len(terms); i++ {
			for g := 1; g <= max(ix.opts.BigramWindow, 1) && g <= i; g++ {
				add(termKey{terms[i-g], terms[i]}, ix.opts.Bigrams)
			}
		}
	}
	if w := ix.opts.Bigrams * ix.opts.SynonymPairs; w > 0 {
		// Adjacent words only: pairs one word apart with a synonym
		// matched unrelated text (TUNING.md).
		for i := 1; i < len(terms); i++ {
			x, y := terms[i-1], terms[i]
			for _, s := range ix.synonyms[x] {
				add(termKey{s, y}, w)
			}
			for _, s := range ix.synonyms[y] {
				add(termKey{x, s}, w)
			}
		}
	}
	for _, t := range words {
		for _, s := range ix.synonyms[t] {
			add(termKey{a: s}, ix.opts.SynonymWeight)
		}
	}
	if ix.variants != nil {
		for _, t := range words {
			for _, v := range ix.variants[ix.porterStem(t)] {
				add(termKey{a: v}, ix.opts.StemVariants)
			}
		}
	}
	return out, terms
}

// Search returns up to k tools for query, best first. server restricts the
// search to one server ("" means all); an unknown server, a blank query, a
// query without any indexed word or k <= 0 give nil. Safe for concurrent
// use.
//
// Scoring is BM25F: a term's per-field frequencies, length-normalized and
// boosted, are summed before one saturation (k1), so a word in both name and
// description counts more than in either, but not twice as much. Terms are
// weighted by the non-negative idf log(1 + (N-n+0.5)/(n+0.5)).
func (ix *Index) Search(query, server string, k int) []Result {
	sid, ok := ix.serverID(server)
	if !ok || k <= 0 {
		return nil
	}
	docs, scores := ix.lexical(query, sid, k)
	return ix.results(docs, scores)
}

// serverID is the id of server, -1 for "" (all servers); false when the
// index has no such server.
func (ix *Index) serverID(server string) (int32, bool) {
	if server == "" {
		return -1, true
	}
	id, ok := ix.servers[server]
	return id, ok
}

func (ix *Index) results(docs []int32, scores []float64) []Result {
	if len(docs) == 0 {
		return nil
	}
	out := make([]Result, len(docs))
	for i, d := range docs {
		out[i] = Result{Name: ix.tools[d].name, Server: ix.tools[d].server, Score: scores[i]}
	}
	return out
}

// lexical is the BM25F ranking of query: the best k documents of server
// sid (-1: all) with their scores.
func (ix *Index) lexical(query string, sid int32, k int) ([]int32, []float64) {
	query = clean.Prefix(query, MaxQueryBytes)
	if k <= 0 || strings.TrimSpace(query) == "" || len(ix.tools) == 0 {
		return nil, nil
	}
	qts, words := ix.queryTerms(query)
	if len(qts) == 0 {
		return nil, nil
	}
	sc := ix.scratch.Get().(*scratch)
	defer ix.scratch.Put(sc)

	k1 := ix.opts.K1
	n := float64(len(ix.tools))
	for _, qt := range qts {
		ps := ix.postings[qt.id]
		df := float64(len(ps))
		w := qt.weight * math.Log(1+(n-df+0.5)/(df+0.5)) * (k1 + 1)
		for _, p := range ps {
			if sid >= 0 && ix.tools[p.doc].sid != sid {
				continue
			}
			tf := float64(p.tf)
			sc.score[p.doc] += w * tf / (tf + k1)
			if !sc.seen[p.doc] {
				sc.seen[p.doc] = true
				sc.hits = append(sc.hits, p.doc)
			}
		}
	}
	if ix.opts.NameMention > 0 {
		ix.boostMentioned(sc, query, sid)
	}
	if ix.opts.NamePhrase > 0 {
		ix.boostNamePhrases(sc, words, sid)
	}
	top := ix.topK(sc, k)
	scores := make([]float64, len(top))
	for i, d := range top {
		scores[i] = sc.score[d]
	}
	for _, d := range sc.hits {
		sc.score[d], sc.seen[d] = 0, false
	}
	sc.hits = sc.hits[:0]
	return top, scores
}

// boostMentioned boosts tools whose name appears verbatim in the query,
// once however often it appears.
func (ix *Index) boostMentioned(sc *scratch, query string, sid int32) {
	var mentioned map[string]bool
	for _, w := range strings.Fields(query) {
		w = strings.ToLower(strings.TrimFunc(w, func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-'
		}))
		if _, ok := ix.byBaseName[w]; !ok || mentioned[w] {
			continue
		}
		if mentioned == nil {
			mentioned = make(map[string]bool)
		}
		mentioned[w] = true
		for _, d := range ix.byBaseName[w] {
			if sid >= 0 && ix.tools[d].sid != sid {
				continue
			}
			if !sc.seen[d] {
				// A mentioned tool without any other match still ranks.
				sc.seen[d] = true
				sc.hits = append(sc.hits, d)
				sc.score[d] = math.SmallestNonzeroFloat64
			}
			sc.score[d] *= 1 + ix.opts.NameMention
		}
	}
}

// namePhraseGap is how many other request words Options.NamePhrase allows
// before each word of a tool's name: "create a new note" says create_note
// (the stop word "a" is gone before the count).
const namePhraseGap = 2

// maxPhraseWords bounds the request words that names are looked for in (a
// request for tools is far shorter), which keeps the look-up linear in the
// catalog however long the request.
const maxPhraseWords = 256

// boostNamePhrases boosts tools whose multi-word name the request says in
// order, each word at most namePhraseGap words after the one before it.
// Names are indexed by their first two words, so each tool is checked (and
// boosted) at most once: when the request holds that pair close enough.
func (ix *Index) boostNamePhrases(sc *scratch, words []string, sid int32) {
	words = words[:min(len(words), maxPhraseWords)]
	if len(words) < 2 {
		return
	}
	said := make(map[string]bool, len(words))
	for _, w := range words {
		said[w] = true
	}
	checked := make(map[termKey]bool)
	for i := range words {
		for j := i + 1; j <= i+1+namePhraseGap && j < len(words); j++ {
			start := termKey{words[i], words[j]}
			if checked[start] {
				continue
			}
			checked[start] = true
			for _, d := range ix.byNameStart[start] {
				t := &ix.tools[d]
				if sid >= 0 && t.sid != sid || !saysName(words, said, t.nameWords) {
					continue
				}
				sc.score[d] *= 1 + ix.opts.NamePhrase
			}
		}
	}
}

// saysName reports whether words hold name in order, each word of name at
// most namePhraseGap words after the one before it. said is the set of
// words, which rules most names out before any scan. It tracks every
// position where the name so far can end, so a repeated word cannot hide a
// match, in len(words) × len(name) steps.
func saysName(words []string, said map[string]bool, name []string) bool {
	for _, w := range name {
		if !said[w] {
			return false
		}
	}
	ends := make([]bool, len(words)) // the name so far can end at word p
	next := make([]bool, len(words))
	for p, w := range words {
		ends[p] = w == name[0]
	}
	for _, w := range name[1:] {
		found := false
		last := -1 // the latest end before p
		for p := range words {
			next[p] = words[p] == w && last >= 0 && p-last <= namePhraseGap+1
			found = found || next[p]
			if ends[p] {
				last = p
			}
		}
		if !found {
			return false
		}
		ends, next = next, ends
	}
	return true
}

// topK selects the k best hits with a bounded heap (a long query touches a
// large share of the catalog; sorting all of it would dominate).
func (ix *Index) topK(sc *scratch, k int) []int32 {
	h := &hitHeap{ix: ix, score: sc.score}
	for _, d := range sc.hits {
		if len(h.docs) < k {
			heap.Push(h, d)
		} else if ix.better(sc.score, d, h.docs[0]) {
			h.docs[0] = d
			heap.Fix(h, 0)
		}
	}
	out := h.docs
	sort.Slice(out, func(i, j int) bool { return ix.better(sc.score, out[i], out[j]) })
	return out
}

// better orders by score, then by name so equal scores are reproducible.
func (ix *Index) better(score []float64, a, b int32) bool {
	if score[a] != score[b] {
		return score[a] > score[b]
	}
	return ix.tools[a].name < ix.tools[b].name
}

// hitHeap is a min-heap: its root is the worst of the best k so far.
type hitHeap struct {
	ix    *Index
	score []float64
	docs  []int32
}

func (h *hitHeap) Len() int           { return len(h.docs) }
func (h *hitHeap) Less(i, j int) bool { return h.ix.better(h.score, h.docs[j], h.docs[i]) }
func (h *hitHeap) Swap(i, j int)      { h.docs[i], h.docs[j] = h.docs[j], h.docs[i] }
func (h *hitHeap) Push(x any)         { h.docs = append(h.docs, x.(int32)) }
func (h *hitHeap) Pop() any {
	x := h.docs[len(h.docs)-1]
	h.docs = h.docs[:len(h.docs)-1]
	return x
}

// markFilePaths puts fileMarker in front of each file system path
// with an extension ("/root/a/b.md", "~/x.csv", "./c.json"): a word with a
// slash, no "://" (URLs are not files to act on), and a last segment with
// a dot followed by one to five characters. Other text is unchanged.
func markFilePaths(text string) string {
	if !strings.Contains(text, "/") {
		return text
	}
	f := strings.Fields(text)
	changed := false
	for i, w := range f {
		w = strings.TrimRight(strings.Trim(w, "'\"`()[]{},;:!?"), ".")
		if !strings.Contains(w, "/") || strings.Contains(w, "://") {
			continue
		}
		last := w[strings.LastIndexByte(w, '/')+1:]
		dot := strings.LastIndexByte(last, '.')
		if dot > 0 && dot < len(last)-1 && len(last)-dot <= 6 {
			f[i] = fileMarker + " " + f[i]
			changed = true
		}
	}
	if !changed {
		return text
	}
	return strings.Join(f, " ")
}

// fileMarker is what markFilePaths puts in front of a path: a word no tool
// text contains, turned into "file" after analysis.
const fileMarker = "xfilepathmarkerx"
