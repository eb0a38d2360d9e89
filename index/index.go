// Package index finds tools by what they do.
//
// The model: every tool is one document with separate fields for its name
// (split into words), title, description, server name, server description,
// parameter names and parameter descriptions. All fields go through one
// analyzer (split on punctuation, `_ - . / :`, camelCase and letter/digit
// boundaries; lowercase; English stop words; Porter stemming), and a query is
// analyzed the same way. Ranking is bleve's BM25 over those fields with
// query-time field boosts: a query term matching a tool's name counts more
// than one matching a parameter description. A few common verb synonyms
// (get/fetch/retrieve, create/add/new, delete/remove, ...) are added to the
// query at a reduced weight.
//
// The index is built once, in one batch, from a slice of tools (in-memory
// scorch: it never merges segments, so incremental updates would degrade
// it); the caller rebuilds it when the catalog changes. Search is safe for
// concurrent use.
//
// BM25 and tiny corpora: the textbook idf log((N-n+0.5)/(n+0.5)) is zero or
// negative when a term occurs in half or more of the documents, which would
// hide a tool in a one- or two-tool index from a query naming it. bleve uses
// the non-negative variant log(1+(N-n+0.5)/(n+0.5)), which is > 0 for every
// n <= N; Search never drops a hit because of its score, so a tool that
// contains a query term is always returned (tested in S4).
package index

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/document"
	"github.com/blevesearch/bleve/v2/index/scorch"
	"github.com/blevesearch/bleve/v2/mapping"
	bindex "github.com/blevesearch/bleve_index_api"
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

// Index fields. serverKeyField holds the exact server name; it is not
// scored (the scorer filters by server itself) but keeps the server in the
// stored index for inspection.
const (
	fieldName       = "name"
	fieldTitle      = "title"
	fieldDesc       = "desc"
	fieldServer     = "server"
	fieldServerDesc = "sdesc"
	fieldParamName  = "pname"
	fieldParamDesc  = "pdesc"
	serverKeyField  = "srv"
)

// Index is a read-only BM25F index over a set of tools.
type Index struct {
	bleve    bleve.Index
	reader   bindex.IndexReader // one snapshot for the index's life: it never changes
	opts     Options
	analyzer *analyzer
	fields   []weightedField
	tools    []docInfo        // by document number (our numbering)
	byNum    []int32          // bleve internal doc number -> document number
	servers  map[string]int32 // server name -> server id
	terms    map[string]termInfo
	avgLen   []float64 // per field (index into fields)
	synonyms map[string][]string
	scratch  sync.Pool // *scratch, reused across searches
}

type docInfo struct {
	name   string
	server string
	sid    int32
	length []int32 // per field (index into fields), in terms
}

// termInfo is what the scorer needs to know about a term before reading
// its postings: which fields hold it and in how many tools.
type termInfo struct {
	mask uint8 // bit i: fields[i] holds the term in some tool
	df   int32 // tools holding the term in any field
}

type weightedField struct {
	name  string
	boost float64
}

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
	m := mapping.NewIndexMapping()
	m.ScoringModel = bindex.BM25Scoring
	// NewMemOnly would be an upsidedown/in-memory store; scorch with an
	// empty path is in-memory and keeps one segment per batch.
	bi, err := bleve.NewUsing("", m, scorch.Name, scorch.Name, nil)
	if err != nil {
		return nil, fmt.Errorf("index: create bleve index: %w", err)
	}
	ix := &Index{
		bleve:    bi,
		opts:     opts,
		analyzer: an,
		fields:   opts.fields(),
		servers:  make(map[string]int32),
		terms:    make(map[string]termInfo),
	}
	if err := ix.build(tools); err != nil {
		_ = ix.Close()
		return nil, err
	}
	ix.synonyms = buildSynonyms(an, opts)
	n := len(ix.tools)
	ix.scratch.New = func() any { return newScratch(n) }
	return ix, nil
}

func (ix *Index) build(tools []Tool) error {
	seen := make(map[string]bool, len(tools))
	total := make([]int64, len(ix.fields))
	batch := ix.bleve.NewBatch()
	var ta tokenAnalyzer
	for _, t := range tools {
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
		info := docInfo{name: t.Name, server: t.Server, sid: sid, length: make([]int32, len(ix.fields))}

		doc := document.NewDocument(t.Name)
		pnames, pdescs := schemaText(t.InputSchema)
		texts := map[string]string{
			fieldName:       baseName(t.Name, t.Server),
			fieldTitle:      t.Title,
			fieldDesc:       t.Description,
			fieldServer:     t.Server,
			fieldServerDesc: t.ServerDescription,
			fieldParamName:  pnames,
			fieldParamDesc:  pdescs,
		}
		docTerms := make(map[string]bool)
		for fi, f := range ix.fields {
			terms := ix.analyzer.terms(texts[f.name])
			if len(terms) == 0 {
				continue
			}
			info.length[fi] = int32(len(terms))
			total[fi] += int64(len(terms))
			for _, term := range terms {
				ti := ix.terms[term]
				ti.mask |= 1 << fi
				if !docTerms[term] {
					docTerms[term] = true
					ti.df++
				}
				ix.terms[term] = ti
			}
			doc.AddField(document.NewTextFieldCustom(f.name, nil,
				[]byte(strings.Join(terms, " ")), bindex.IndexField, ta))
		}
		doc.AddField(document.NewTextFieldCustom(serverKeyField, nil,
			[]byte(t.Server), bindex.IndexField, keywordAnalyzer{}))
		if err := batch.IndexAdvanced(doc); err != nil {
			return fmt.Errorf("index: add tool %q: %w", t.Name, err)
		}
		ix.tools = append(ix.tools, info)
	}
	if err := ix.bleve.Batch(batch); err != nil {
		return fmt.Errorf("index: batch of %d tools: %w", len(tools), err)
	}
	ix.avgLen = make([]float64, len(ix.fields))
	for fi := range ix.fields {
		if len(tools) > 0 {
			ix.avgLen[fi] = max(float64(total[fi])/float64(len(tools)), 1)
		}
	}
	adv, err := ix.bleve.Advanced()
	if err != nil {
		return fmt.Errorf("index: open bleve internals: %w", err)
	}
	if ix.reader, err = adv.Reader(); err != nil {
		return fmt.Errorf("index: open reader: %w", err)
	}
	return ix.mapDocNumbers(seen)
}

// mapDocNumbers records which of our documents each bleve document number
// is: postings come by bleve's number, scores are kept by ours.
func (ix *Index) mapDocNumbers(names map[string]bool) error {
	pos := make(map[string]int32, len(ix.tools))
	for i, t := range ix.tools {
		pos[t.name] = int32(i)
	}
	ids, err := ix.reader.DocIDReaderAll()
	if err != nil {
		return fmt.Errorf("index: list documents: %w", err)
	}
	defer ids.Close()
	for {
		id, err := ids.Next()
		if err != nil {
			return fmt.Errorf("index: list documents: %w", err)
		}
		if id == nil {
			break
		}
		ext, err := ix.reader.ExternalID(id)
		if err != nil {
			return fmt.Errorf("index: document id: %w", err)
		}
		p, ok := pos[ext]
		if !ok {
			return fmt.Errorf("index: unexpected document %q", ext)
		}
		num := id.Value()
		for uint64(len(ix.byNum)) <= num {
			ix.byNum = append(ix.byNum, -1)
		}
		ix.byNum[num] = p
	}
	return nil
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
	var s schemaNode
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", ""
	}
	var nb, db strings.Builder
	s.collect(&nb, &db, 0)
	return nb.String(), db.String()
}

type schemaNode struct {
	Description string                `json:"description"`
	Properties  map[string]schemaNode `json:"properties"`
	Items       *schemaNode           `json:"items"`
}

func (s *schemaNode) UnmarshalJSON(b []byte) error {
	// Schemas in the wild carry odd shapes (boolean schemas, "items" as an
	// array, non-string descriptions); take what fits and ignore the rest.
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil
	}
	if d, ok := raw["description"]; ok {
		_ = json.Unmarshal(d, &s.Description)
	}
	if p, ok := raw["properties"]; ok {
		_ = json.Unmarshal(p, &s.Properties)
	}
	if it, ok := raw["items"]; ok {
		var n schemaNode
		if json.Unmarshal(it, &n) == nil {
			s.Items = &n
		}
	}
	return nil
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

// Close releases the index.
func (ix *Index) Close() error {
	var errs []error
	if ix.reader != nil {
		errs = append(errs, ix.reader.Close())
	}
	errs = append(errs, ix.bleve.Close())
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("index: close: %w", err)
	}
	return nil
}
