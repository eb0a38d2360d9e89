// Package index finds tools by what they do.
//
// The model: every tool is one document with fields for its name (split
// into words, without the "<server>__" prefix), title, description, server
// name, server description, parameter names and parameter descriptions. All
// fields go through one analyzer (split on punctuation, `_ - . / :`,
// camelCase and letter/digit boundaries; lowercase; English stop words and
// numbers dropped; plural stemming), and a query is analyzed the same way,
// except that phrases addressing the assistant ("show me", "tell me") are
// dropped from it.
//
// Ranking is BM25F: per term, each field's frequency is length-normalized
// (b), weighted by the field's boost and summed, then saturated once (k1)
// and weighted by idf. On top of single words the index holds pairs of
// nearby words of names and descriptions ("delete link"), which reward a
// tool whose text says what the request says in the same order, also with
// one word replaced by a synonym ("retrieve the top" pairs as get+top) and
// with a file path in the request read as the word "file" ("save it in
// /root/x.md" pairs as save+file and write+file); a few verb synonyms
// (get/fetch/retrieve, create/add, delete/remove, ...) join the query at
// half weight, and so do the indexed words that share a query
// word's Porter stem ("published" finds "publish", "limited" the parameter
// "limit"; the index itself stems plurals only). A tool whose full name
// the request spells out ("using todoist_get_tasks") gets its score
// doubled, and one whose multi-word name it says in its own words, in
// order ("create a new note" for create_note), a tenth more. TUNING.md
// has the figures behind every choice.
//
// With embeddings, SearchHybrid blends that ranking with the cosine
// similarity of the tools' vectors (NewVectors; the text to embed for a
// tool is EmbedText): a linear blend of the normalised scores, the vectors
// prefiltered by sign-bit signatures so that 10,000 tools stay well under
// a millisecond (hybrid.go, TUNING.md). The index does not talk to an
// embeddings endpoint: the caller brings the vectors.
//
// The index is an in-memory inverted index built once from a slice of tools
// and never updated: the caller builds a new one when the catalog changes
// (10,000 tools take well under a second). It does not use bleve's index and
// scorer, only its English stop list and stemmers: bleve's BM25 (coord
// factor, square-root tf, average length estimated from distinct terms)
// ranked worse than textbook BM25 on the benchmark sets, and its postings
// iterators made long natural-language queries take milliseconds on 10,000
// tools (TUNING.md). Search is safe for concurrent use.
//
// BM25 and tiny corpora: the textbook idf log((N-n+0.5)/(n+0.5)) is zero or
// negative when a term occurs in half or more of the documents, which would
// hide a tool in a one- or two-tool index from a query naming it. The index
// uses the non-negative variant log(1+(N-n+0.5)/(n+0.5)), which is > 0 for
// every n <= N, and never drops a hit because of its score, so a tool that
// contains a query word is always returned (tested in S4).
package index

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
)

// Tool is what the index knows about one tool. Pure: no MCP types.
type Tool struct {
	Name              string          // exposed name (e.g. "weather__get_forecast"); the unique key
	Server            string          // configured server name (e.g. "weather")
	Title             string          // optional display title
	Description       string          // tool description
	InputSchema       json.RawMessage // JSON Schema object; property names and descriptions are indexed (nil or invalid is ignored)
	ServerDescription string          // optional
}

// Result is one search hit, best first in a result list.
type Result struct {
	Name   string
	Server string
	Score  float64
}

// Index fields.
const (
	fieldName       = "name"
	fieldTitle      = "title"
	fieldDesc       = "desc"
	fieldServer     = "server"
	fieldServerDesc = "sdesc"
	fieldParamName  = "pname"
	fieldParamDesc  = "pdesc"
)

// Index is a read-only BM25F index over a set of tools.
type Index struct {
	opts     Options
	analyzer *analyzer
	tools    []docInfo         // by document number
	servers  map[string]int32  // server name -> server id
	termIDs  map[termKey]int32 // term -> index into postings
	postings [][]posting       // by term ID: tools holding the term, by document number
	synonyms map[string][]string
	// variants maps a Porter stem to the indexed words with that stem
	// (Options.StemVariants).
	variants map[string][]string
	porter   analysis.TokenFilter // stateless, safe for concurrent use
	// byBaseName maps a lowercased multi-word tool name (without server
	// prefix) to its tools, for Options.NameMention.
	byBaseName map[string][]int32
	// byNameStart maps the first two analyzed words of a multi-word tool
	// name to its tools, for Options.NamePhrase.
	byNameStart map[termKey][]int32
	scratch     sync.Pool // *scratch, reused across searches
}

type docInfo struct {
	name      string
	server    string
	sid       int32
	nameWords []string // the analyzed words of a multi-word name (Options.NamePhrase)
}

// posting is one tool holding a term. tf is the term's BM25F pseudo
// frequency in that tool: its frequency in each field, divided by the
// field's length normalization (1 - b + b*len/avglen) and multiplied by the
// field's boost, summed over fields. Boosts and b are fixed per index, so
// this is computed once at build time and a search only saturates and
// weights it.
type posting struct {
	doc int32
	tf  float32
}

type weightedField struct {
	name    string
	boost   float64
	bigrams bool // index adjacent word pairs (Options.Bigrams)
}

// termKey is an index term: a word (b empty) or a pair of nearby words.
// A struct key spares building a string per pair: a 10,000-tool build
// indexes over a million pairs.
type termKey struct{ a, b string }

// New builds an index over tools with the tuned default options.
func New(tools []Tool) (*Index, error) {
	return NewWithOptions(tools, DefaultOptions())
}

// NewWithOptions builds an index over tools. Tools with an empty or
// duplicate name are rejected: the name is the key the hub routes by.
func NewWithOptions(tools []Tool, opts Options) (*Index, error) {
	an, err := newAnalyzer(opts)
	if err != nil {
		return nil, fmt.Errorf("index: build analyzer: %w", err)
	}
	ix := &Index{
		opts:        opts,
		analyzer:    an,
		servers:     make(map[string]int32),
		termIDs:     make(map[termKey]int32),
		byBaseName:  make(map[string][]int32),
		byNameStart: make(map[termKey][]int32),
		porter:      porterFilter{},
	}

	if err := ix.build(tools); err != nil {
		return nil, err
	}
	ix.synonyms = buildSynonyms(an, opts)
	if opts.StemVariants > 0 {
		ix.variants = ix.buildVariants()
	}
	n := len(ix.tools)
	ix.scratch.New = func() any { return newScratch(n) }
	return ix, nil
}

func (ix *Index) build(tools []Tool) error {
	fields := ix.opts.fields()
	seen := make(map[string]bool, len(tools))
	// Sequential pass: validate, number the servers, and analyze each
	// server's name and description once (they are the same for all its
	// tools).
	type serverKey struct{ name, desc string }
	serverTerms := make(map[serverKey][2][]string)
	memo := make(map[string]string)
	perServer := make([][2][]string, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return errors.New("index: tool with empty name")
		}
		if seen[t.Name] {
			return fmt.Errorf("index: duplicate tool name %q", t.Name)
		}
		seen[t.Name] = true
		sid, ok := ix.servers[t.Server]
		if !ok {
			sid = int32(len(ix.servers))
			ix.servers[t.Server] = sid
		}
		ix.tools = append(ix.tools, docInfo{name: t.Name, server: t.Server, sid: sid})
		sk := serverKey{t.Server, t.ServerDescription}
		st, ok := serverTerms[sk]
		if !ok {
			st = [2][]string{ix.analyzer.termsMemo(t.Server, memo), ix.analyzer.termsMemo(t.ServerDescription, memo)}
			serverTerms[sk] = st
		}
		perServer[i] = st
	}

	// Parallel pass: analyze each tool's own texts (the bulk of the build).
	analyzed := make([][][]string, len(tools)) // tool -> field -> terms
	nameWords := make([][]string, len(tools))  // tool -> the words of its name
	workers := max(min(runtime.GOMAXPROCS(0), len(tools)/256), 1)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			memo := make(map[string]string) // per worker: no locking
			for i := w; i < len(tools); i += workers {
				t := tools[i]
				base := baseName(t.Name, t.Server)
				nameWords[i] = ix.analyzer.termsMemo(base, memo)
				pnames, pdescs := schemaText(t.InputSchema)
				analyzed[i] = make([][]string, len(fields))
				for fi, f := range fields {
					var text string
					switch f.name {
					case fieldServer:
						analyzed[i][fi] = perServer[i][0]
						continue
					case fieldServerDesc:
						analyzed[i][fi] = perServer[i][1]
						continue
					case fieldName:
						text = base
					case fieldTitle:
						text = t.Title
					case fieldDesc:
						text = t.Description
					case fieldParamName:
						text = pnames
					case fieldParamDesc:
						text = pdescs
					}
					analyzed[i][fi] = ix.analyzer.termsMemo(text, memo)
				}
			}
		}()
	}
	wg.Wait()

	total := make([]int, len(fields))
	for i, perField := range analyzed {
		for fi, terms := range perField {
			total[fi] += len(terms)
		}
		if w := nameWords[i]; len(w) >= 2 {
			// Only multi-word names: a request that says "search" is not
			// naming the tool "search".
			key := strings.ToLower(baseName(tools[i].Name, tools[i].Server))
			ix.byBaseName[key] = append(ix.byBaseName[key], int32(i))
			ix.tools[i].nameWords = w
			start := termKey{w[0], w[1]}
			ix.byNameStart[start] = append(ix.byNameStart[start], int32(i))
		}
	}
	avg := make([]float64, len(fields))
	for fi := range fields {
		avg[fi] = max(float64(total[fi])/float64(max(len(tools), 1)), 1)
	}
	// Second pass: per tool, the pseudo frequency of each of its terms.
	b := ix.opts.B
	tf := make(map[termKey]float64)
	for d, perField := range analyzed {
		clear(tf)
		for fi, terms := range perField {
			if len(terms) == 0 {
				continue
			}
			w := fields[fi].boost / (1 - b + b*float64(len(terms))/avg[fi])
			for _, term := range terms {
				tf[termKey{a: term}] += w
			}
			if ix.opts.Bigrams > 0 && fields[fi].bigrams {
				for j := 1; j < len(terms); j++ {
					for g := 1; g <= max(ix.opts.BigramWindow, 1) && g <= j; g++ {
						tf[termKey{terms[j-g], terms[j]}] += w
					}
				}
			}
		}
		for term, v := range tf {
			id, ok := ix.termIDs[term]
			if !ok {
				id = int32(len(ix.postings))
				ix.termIDs[term] = id
				ix.postings = append(ix.postings, nil)
			}
			ix.postings[id] = append(ix.postings[id], posting{doc: int32(d), tf: float32(v)})
		}
	}
	return nil
}

// buildVariants groups the indexed words by their Porter stem. It stems
// the vocabulary, not the documents, so it adds little to a build.
func (ix *Index) buildVariants() map[string][]string {
	groups := make(map[string][]string)
	for k := range ix.termIDs {
		if k.b != "" {
			continue
		}
		if s := ix.porterStem(k.a); s != "" {
			groups[s] = append(groups[s], k.a)
		}
	}
	for _, words := range groups {
		sort.Strings(words) // map order must not leak into query order
	}
	return groups
}

// porterStem returns the Porter stem of an analyzed word, or "" for words
// too short to stem and numbers.
func (ix *Index) porterStem(w string) string {
	if len(w) <= 2 || isDigits(w) {
		return ""
	}
	out := ix.porter.Filter(analysis.TokenStream{&analysis.Token{Term: []byte(w)}})
	if len(out) != 1 || len(out[0].Term) == 0 {
		return ""
	}
	return string(out[0].Term)
}

// baseName strips the "<server>__" prefix the hub adds, so the server's
// words are not counted twice (they have their own field).
func baseName(name, server string) string {
	if server != "" {
		if rest, ok := strings.CutPrefix(name, server+"__"); ok && rest != "" {
			return rest
		}
	}
	return name
}

// schemaText returns the property names and the property descriptions of a
// JSON Schema object, one level deep plus nested object properties. An
// invalid or absent schema yields nothing: a tool is still searchable by the
// rest of its record.
func schemaText(raw json.RawMessage) (names, descs string) {
	if len(raw) == 0 {
		return "", ""
	}
	// Schemas in the wild carry odd shapes (boolean schemas, "items" as an
	// array, non-string descriptions). json.Unmarshal skips a value of the
	// wrong type, keeps decoding and reports an UnmarshalTypeError: keep
	// what fitted. Only a syntax error loses the schema.
	var s schemaNode
	if err := json.Unmarshal(raw, &s); err != nil {
		var te *json.UnmarshalTypeError
		if !errors.As(err, &te) {
			return "", ""
		}
	}
	var nb, db strings.Builder
	s.collect(&nb, &db, 0)
	return nb.String(), db.String()
}

type schemaNode struct {
	Description string                 `json:"description"`
	Properties  map[string]*schemaNode `json:"properties"`
	Items       *schemaNode            `json:"items"`
}

func (s *schemaNode) collect(names, descs *strings.Builder, depth int) {
	if depth > 3 {
		return
	}
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := s.Properties[k]
		names.WriteString(k)
		if p == nil {
			names.WriteByte(' ')
			continue
		}
		names.WriteByte(' ')
		if p.Description != "" {
			descs.WriteString(p.Description)
			descs.WriteByte('\n')
		}
		p.collect(names, descs, depth+1)
		if p.Items != nil {
			p.Items.collect(names, descs, depth+1)
		}
	}
}

// Len is the number of tools in the index.
func (ix *Index) Len() int { return len(ix.tools) }

// Close releases the index. It holds only memory; Close exists so callers
// treat it like any other resource (and for a future on-disk index).
func (ix *Index) Close() error { return nil }
