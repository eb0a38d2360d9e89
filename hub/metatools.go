package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/closest"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/index"
	"github.com/mcp-hub/mcp-hub/pin"
)

// Meta-tool names. They are reserved: an upstream tool exposed under one of
// them is reported as a collision.
const (
	SearchToolsName = "search_tools"
	CallToolName    = "call_tool"
	// MetaServer is the server name meta-tool calls are counted under
	// (Stats, and the gateway's metrics).
	MetaServer = "_hub"
)

func isMetaTool(name string) bool { return name == SearchToolsName || name == CallToolName }

// The input schemas of the meta-tools, the same in both eras.
const (
	searchToolsSchema = `{"type":"object","properties":{` +
		`"query":{"type":"string","description":"What you want to do, in plain words (searched by keywords)."},` +
		`"queries":{"type":"array","items":{"type":"string"},"description":"For a task of several steps: one short query per step (e.g. [\"read csv file\", \"send email\"])."},` +
		`"server_name":{"type":"string","description":"Load all tools of this server, or restrict the query to it."},` +
		`"tool_names":{"type":"array","items":{"type":"string"},"description":"Exact tool names to load."}}}`
	callToolSchema = `{"type":"object","properties":{` +
		`"name":{"type":"string","description":"The tool's exact name, as search_tools listed it."},` +
		`"arguments":{"description":"The tool's arguments: an object (a JSON string of one is accepted too)."}},` +
		`"required":["name"]}`
)

// metaTools are the definitions of search_tools (whose description carries
// the manifest of the session's deferred tools) and call_tool.
func (h *Hub) metaTools(c *Catalog, ts *config.Toolset) []*mcp.Tool {
	alwaysLoad := mcp.Meta{alwaysLoadKey: true}
	search := &mcp.Tool{
		Name: SearchToolsName,
		Description: "Search for tools that are not in your tool list yet, and load them. " +
			"Pass `query` (what you want to do, in plain words) to search, or for a task of several steps `queries` (one short query per step), `server_name` to load a whole server's tools " +
			"(or to search within it, with `query`), or `tool_names` (exact names from the list below) to load specific tools. " +
			"Loaded tools join your tool list and can be called directly, or through call_tool in the same turn.\n\n" +
			"Deferred tools by server:\n" + h.manifest(c, ts),
		InputSchema: json.RawMessage(searchToolsSchema),
		Meta:        alwaysLoad,
	}
	tools := []*mcp.Tool{search}
	if h.Config().Discovery.CallToolEnabled() {
		tools = append(tools, &mcp.Tool{
			Name: CallToolName,
			Description: "Call a tool by name with arguments. Use it for tools that search_tools has just loaded, " +
				"when they do not yet appear in your tool list.",
			InputSchema: json.RawMessage(callToolSchema),
			Meta:        alwaysLoad,
		})
	}
	return tools
}

// manifestBudget is the size, in characters (about 4 per token), past
// which the manifest drops tool names: with hundreds of deferred servers
// the names alone would cost more tokens than deferring saves.
const manifestBudget = 24000

// manifest lists each server with deferred tools visible under ts: its
// tool count, the names (the first four and "... and N more" past ten),
// and a one-line summary. Past manifestBudget, each server gets one line
// with its count and summary; search_tools {server_name} lists its names.
func (h *Hub) manifest(c *Catalog, ts *config.Toolset) string {
	byServer := map[string][]*Tool{}
	for _, t := range c.Tools {
		if t.Deferred && allows(ts, t) {
			byServer[t.Server] = append(byServer[t.Server], t)
		}
	}
	servers := sortedKeys(byServer)
	var b strings.Builder
	for _, server := range servers {
		tools := byServer[server]
		names := make([]string, len(tools))
		for i, t := range tools {
			names[i] = t.Name
		}
		slices.SortFunc(names, naturalCompare)
		if len(names) > 10 {
			names = append(names[:4:4], fmt.Sprintf("... and %d more", len(tools)-4))
		}
		fmt.Fprintf(&b, "- %s (%s): %s\n", server, plural(len(tools), "tool"), strings.Join(names, ", "))
		if sum := h.serverSummary(server, tools); sum != "" {
			fmt.Fprintf(&b, "  %s\n", sum)
		}
	}
	if b.Len() > manifestBudget {
		b.Reset()
		for _, server := range servers {
			tools := byServer[server]
			fmt.Fprintf(&b, "- %s (%s)", server, plural(len(tools), "tool"))
			if sum := h.serverSummary(server, tools); sum != "" {
				fmt.Fprintf(&b, ": %s", sum)
			}
			b.WriteString("\n")
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

// serverSummary is the server's configured description, or the first
// sentences of its tools' descriptions, cut to 80 characters.
func (h *Hub) serverSummary(server string, tools []*Tool) string {
	const limit = 80
	text := ""
	if sc := h.Config().Servers[server]; sc != nil && sc.Description != "" {
		text = sc.Description
	} else {
		var parts []string
		for _, t := range tools {
			if s := firstSentence(t.Def.Description); s != "" {
				parts = append(parts, s)
			}
			if len(strings.Join(parts, " ")) > limit {
				break
			}
		}
		text = strings.Join(parts, " ")
	}
	text = strings.Join(strings.Fields(text), " ")
	if len(text) > limit {
		cut := limit - 3
		for cut > 0 && !isRuneStart(text[cut]) {
			cut--
		}
		text = strings.TrimRight(text[:cut], " ") + "..."
	}
	return text
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func firstSentence(s string) string {
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			return strings.TrimSpace(s[:i])
		}
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			return s[:i+1]
		}
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// naturalCompare orders names with embedded numbers numerically (tool_2 before tool_10).
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.Atoi(da)
			nb, _ := strconv.Atoi(db)
			if na != nb {
				return na - nb
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitsPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

// instructions are the server instructions sent at initialize: how to use
// the meta-tools, and the same manifest as search_tools.
func (h *Hub) instructions(c *Catalog, ts *config.Toolset) string {
	text := "This server (mcp-hub) gives access to many tools. Some are not in your tool list until you load them: " +
		"call search_tools with a plain-words query (one per step of a task, in queries), or server_name, or exact tool_names, to find and load them. " +
		"Loaded tools join your tool list"
	if h.Config().Discovery.CallToolEnabled() {
		text += "; if they do not appear there yet, call them through call_tool {name, arguments}"
	}
	return h.withManifest(c, ts, text)
}

// withManifest is server instructions: lead, then the manifest of deferred
// tools; none with discovery off or nothing deferred.
func (h *Hub) withManifest(c *Catalog, ts *config.Toolset, lead string) string {
	if !h.Config().Discovery.Enabled {
		return ""
	}
	m := h.manifest(c, ts)
	if m == "" {
		return ""
	}
	return lead + ".\n\nDeferred tools by server:\n" + m
}

// searchArgs are search_tools' arguments. ServerName is a pointer because
// an empty server_name is an error, unlike an absent one.
type searchArgs struct {
	Query      string   `json:"query"`
	Queries    []string `json:"queries"`
	ServerName *string  `json:"server_name"`
	ToolNames  []string `json:"tool_names"`
}

// maxSearchQueries bounds the queries (query and queries together) of one
// search_tools call: each is a search of its own.
const maxSearchQueries = 10

// queries are the call's search queries, query first, trimmed, blank ones
// left out.
func (a searchArgs) queries() []string {
	var out []string
	for _, q := range append([]string{a.Query}, a.Queries...) {
		if q = strings.TrimSpace(q); q != "" {
			out = append(out, q)
		}
	}
	return out
}

// quoted is the queries as a search result names them: 'a', 'b'.
func quoted(queries []string) string {
	if len(queries) == 0 {
		return ""
	}
	return "'" + strings.Join(queries, "', '") + "'"
}

// searchTools implements search_tools (spec: docs/search-tools.md).
func (s *Session) searchTools(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	var args searchArgs
	if err := decodeArgs(req.Params.Arguments, &args); err != nil {
		return s.fail(ctx, "Error: invalid arguments for search_tools: "+err.Error()+". Expected {query?: string, queries?: string[], server_name?: string, tool_names?: string[]}.")
	}
	queries := args.queries()
	if len(queries) == 0 && args.ServerName == nil && len(args.ToolNames) == 0 {
		return s.fail(ctx, "Error: Please provide at least one of: query, server_name, or tool_names.")
	}
	if len(queries) > maxSearchQueries {
		return s.fail(ctx, fmt.Sprintf("Error: search_tools takes at most %d queries (got %d): one per step of the task.", maxSearchQueries, len(queries)))
	}
	query := quoted(queries)
	c := s.hub.Catalog()
	_, loadedNow, deferredNow := s.partition(c)
	pool := append(loadedNow, deferredNow...) // every deferred tool this session can see
	var servers []string
	for _, t := range pool {
		if !slices.Contains(servers, t.Server) {
			servers = append(servers, t.Server)
		}
	}
	slices.Sort(servers)
	server := ""
	if args.ServerName != nil {
		server = *args.ServerName
		if !slices.Contains(servers, server) {
			return s.fail(ctx, fmt.Sprintf("Error: Unknown server '%s'. Valid servers: %s.", server, strings.Join(servers, ", ")))
		}
	}

	var found []*Tool
	var notFound []string
	limit := s.hub.Config().Discovery.SearchLimit()
	switch {
	case len(args.ToolNames) > 0:
		// Maps, not slice scans: the client may send many names, and
		// this must stay linear in them.
		byName := make(map[string]*Tool, len(pool))
		for _, t := range pool {
			byName[t.Name] = t
		}
		seen := make(map[string]bool, len(args.ToolNames))
		for _, name := range args.ToolNames {
			if seen[name] {
				continue
			}
			seen[name] = true
			if t, ok := byName[name]; ok && (server == "" || t.Server == server) {
				found = append(found, t)
			} else if q, held := c.Quarantined(name); held && s.visible(&Tool{Server: q.Server, Original: q.Original}) {
				// Held back by its pin (pins.go): say so, not "not found".
				notFound = append(notFound, fmt.Sprintf("%s (quarantined; a person must approve it: `mcp-hub pins approve %s %s`)", q.Name, q.Server, pin.Escape(q.Original)))
			} else {
				notFound = append(notFound, ShownName(name))
			}
		}
	case len(queries) == 0:
		for _, t := range pool {
			if t.Server == server {
				found = append(found, t)
			}
		}
		slices.SortStableFunc(found, func(a, b *Tool) int { return slices.Index(c.Tools, a) - slices.Index(c.Tools, b) })
	default:
		found = s.search(ctx, c, pool, queries, server, limit)
	}

	if isModern(req) {
		// Nothing is loaded for a modern client: it calls what it found
		// through call_tool (modern.go).
		s.traceSearch(ctx, 0)
		if server != "" {
			pool = slices.DeleteFunc(pool, func(t *Tool) bool { return t.Server != server })
		}
		return textResult(s.hub.modernSearchResultText(found, notFound, pool, query, server))
	}
	var already []string
	var toLoad []*Tool
	for _, t := range found {
		if s.isLoaded(t.Name) {
			already = append(already, t.Name)
		} else {
			toLoad = append(toLoad, t)
		}
	}
	added := s.load(ctx, req.Session, c, toLoad)
	s.traceSearch(ctx, len(added))
	if server != "" {
		// Suggest only names that the server filter would accept.
		pool = slices.DeleteFunc(pool, func(t *Tool) bool { return t.Server != server })
	}
	return textResult(s.hub.searchResultText(found, added, already, notFound, pool, query, server))
}

// search runs each query (hybrid when the catalog has vectors and the
// query could be embedded in time, else BM25), keeps the hits this session
// may see, and interleaves the rankings when there are several queries
// (the steps of one task): limit tools for one query, one more per further
// step (index.StepsLimit).
func (s *Session) search(ctx context.Context, c *Catalog, pool []*Tool, queries []string, server string, limit int) []*Tool {
	if c.searchIndex() == nil {
		return nil
	}
	visible := map[string]*Tool{}
	for _, t := range pool {
		visible[t.Name] = t
	}
	limit = index.StepsLimit(limit, len(queries))
	v := c.vectors.Load()
	var qvs [][]float32
	if v != nil {
		qvs = v.sem.queryVectors(ctx, queries) // nil: lexical
	}
	// The steps of a task are ranked at once: each ranking is independent
	// and a hybrid one costs a pass over the vectors.
	rankings := make([][]index.Result, len(queries))
	var wg sync.WaitGroup
	for i, q := range queries {
		var qv []float32
		if qvs != nil {
			qv = qvs[i]
		}
		wg.Go(func() { rankings[i] = visibleRanking(c, v, qv, q, server, visible, limit) })
	}
	wg.Wait()
	hits := index.Interleave(rankings, limit)
	out := make([]*Tool, len(hits))
	for i, r := range hits {
		out[i] = visible[r.Name]
	}
	return out
}

// visibleRanking is the best limit hits for query that the session may
// see. It fetches more than limit so that tools the toolset hides do not
// crowd out ones it shows: a few times the limit first, everything when
// that was not enough (a hybrid ranking over the whole catalog costs an
// exact cosine per tool).
func visibleRanking(c *Catalog, v *toolVectors, qv []float32, query, server string, visible map[string]*Tool, limit int) []index.Result {
	n := c.searchIndex().Len()
	k := limit
	if len(visible) < n {
		k = min(n, max(8*limit, index.FusionDepth))
	}
	for {
		out := visibleHits(rank(c, v, qv, query, server, k), visible, limit)
		if len(out) == limit || k >= n || len(visible) == n {
			return out
		}
		k = n
	}
}

// rank is the hybrid ranking when there is a query vector, else BM25F.
func rank(c *Catalog, v *toolVectors, qv []float32, query, server string, k int) []index.Result {
	if v != nil && qv != nil {
		return c.searchIndex().SearchHybrid(query, qv, v.vecs, server, k)
	}
	return c.searchIndex().Search(query, server, k)
}

// visibleHits keeps the first limit hits the session may see.
func visibleHits(hits []index.Result, visible map[string]*Tool, limit int) []index.Result {
	var out []index.Result
	for _, r := range hits {
		if _, ok := visible[r.Name]; ok {
			out = append(out, r)
			if len(out) == limit {
				break
			}
		}
	}
	return out
}

// searchResultText lays out search_tools' answer (spec X5, X6); query is
// the call's queries as quoted shows them.
func (h *Hub) searchResultText(found []*Tool, added, already, notFound []string, pool []*Tool, query, server string) string {
	text := h.searchResultBody(found, added, already, notFound, pool, query, server)
	if len(found) == 0 || len(added) == 0 {
		return text
	}
	text += "\n\nThese tools are now loaded: call them directly by name"
	if h.Config().Discovery.CallToolEnabled() {
		text += ", or through call_tool {name, arguments} if they are not in your tool list yet"
	}
	return text + "."
}

// searchResultBody is searchResultText but for what it says of loading:
// the tools found, with the full input schemas of those in schemas.
func (h *Hub) searchResultBody(found []*Tool, schemas, already, notFound []string, pool []*Tool, query, server string) string {
	added := schemas
	var b strings.Builder
	if len(found) == 0 {
		b.WriteString("No tools found")
		if query != "" {
			fmt.Fprintf(&b, " matching %s", query)
		}
		if server != "" {
			fmt.Fprintf(&b, " in server '%s'", server)
		}
		b.WriteString(".")
		if len(notFound) > 0 {
			fmt.Fprintf(&b, " Not found: %s.", strings.Join(notFound, ", "))
			h.writeSuggestions(&b, notFound, pool)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "Found %d tool(s):\n", len(found))
	for _, t := range found {
		desc := tidyDescription(t.Def.Description)
		if desc == "" {
			desc = "(no description)"
		}
		if strings.HasPrefix(t.Name, t.Server+"__") {
			// The name says the server already.
			fmt.Fprintf(&b, "\n  %s: %s\n", t.Name, desc)
		} else {
			fmt.Fprintf(&b, "\n  [%s] %s: %s\n", t.Server, t.Name, desc)
		}
		raw := t.Def.InputSchema.(json.RawMessage)
		if slices.Contains(added, t.Name) {
			// The full schema, once: what the model needs to call the
			// tool in this turn, without a parameter list repeating it.
			fmt.Fprintf(&b, "  Input schema: %s\n", minifySchema(raw))
			continue
		}
		params := schemaParams(raw)
		if len(params) == 0 {
			b.WriteString("  No parameters.\n")
			continue
		}
		b.WriteString("  Parameters:\n")
		for _, p := range params {
			fmt.Fprintf(&b, "    - %s: %s", p.name, p.typ)
			if p.required {
				b.WriteString(" (required)")
			}
			if p.desc != "" {
				fmt.Fprintf(&b, " - %s", p.desc)
			}
			b.WriteString("\n")
		}
	}
	if len(already) > 0 {
		fmt.Fprintf(&b, "\nAlready loaded: %s\n", strings.Join(already, ", "))
	}
	if len(notFound) > 0 {
		fmt.Fprintf(&b, "\nNot found: %s.", strings.Join(notFound, ", "))
		h.writeSuggestions(&b, notFound, pool)
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// tidyDescription trims each line of a description and drops blank ones:
// indentation and empty lines cost tokens and say nothing to a model.
func tidyDescription(s string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// minifySchema is the schema's compact JSON without the keywords that only
// label it for humans or tools: "title" (generated from the name by most
// SDKs: "Path Audio Time Series Y"), "$schema", and "default": null. What
// constrains a call (types, required, enums, descriptions, nesting) stays,
// in the upstream's key order. A schema that does not parse is returned
// compacted as it is.
func minifySchema(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := writeSchema(&buf, raw, 0); err != nil {
		return compactJSON(raw)
	}
	return buf.String()
}

// maxSchemaDepth bounds the walk: deeper parts are copied as they are.
const maxSchemaDepth = 32

// Keywords whose value is a schema (or an array of schemas), and keywords
// whose value maps names to schemas. Only schema positions lose labels: a
// property named "title" under "properties" is a name and stays.
var (
	subschemaKeys = map[string]bool{"items": true, "additionalProperties": true, "not": true, "if": true, "then": true, "else": true,
		"contains": true, "propertyNames": true, "unevaluatedProperties": true, "unevaluatedItems": true, "additionalItems": true,
		"anyOf": true, "oneOf": true, "allOf": true, "prefixItems": true}
	schemaMapKeys = map[string]bool{"properties": true, "patternProperties": true, "$defs": true, "definitions": true, "dependentSchemas": true}
)

// writeSchema writes the schema raw to buf, compact and without labels.
func writeSchema(buf *bytes.Buffer, raw json.RawMessage, depth int) error {
	raw = bytes.TrimSpace(raw)
	if depth > maxSchemaDepth || len(raw) == 0 || raw[0] != '{' {
		return json.Compact(buf, raw)
	}
	return eachMember(raw, buf, func(key string, val json.RawMessage) (bool, error) {
		switch {
		case key == "$schema", key == "title" && isJSONString(val), key == "default" && string(val) == "null":
			return false, nil
		case schemaMapKeys[key] && len(val) > 0 && val[0] == '{':
			return true, eachMember(val, buf, func(_ string, sub json.RawMessage) (bool, error) {
				return true, writeSchema(buf, sub, depth+1)
			})
		case subschemaKeys[key] && len(val) > 0 && val[0] == '[':
			var items []json.RawMessage
			if err := json.Unmarshal(val, &items); err != nil {
				return true, err
			}
			buf.WriteByte('[')
			for i, it := range items {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := writeSchema(buf, it, depth+1); err != nil {
					return true, err
				}
			}
			buf.WriteByte(']')
			return true, nil
		case subschemaKeys[key]:
			return true, writeSchema(buf, val, depth+1)
		}
		return true, json.Compact(buf, val)
	})
}

// eachMember writes the object raw to buf member by member, in order: keep
// says whether a member is written; when it is, its key is already written
// and keep writes the value.
func eachMember(raw json.RawMessage, buf *bytes.Buffer, keep func(key string, val json.RawMessage) (bool, error)) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("not an object")
	}
	buf.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return err
		}
		mark := buf.Len()
		if !first {
			buf.WriteByte(',')
		}
		writeJSONString(buf, key)
		buf.WriteByte(':')
		ok, err := keep(key, bytes.TrimSpace(val))
		if err != nil {
			return err
		}
		if !ok {
			buf.Truncate(mark)
			continue
		}
		first = false
	}
	buf.WriteByte('}')
	return nil
}

func isJSONString(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '"' }

// writeJSONString writes s as a JSON string, without escaping <, > and &.
func writeJSONString(buf *bytes.Buffer, s string) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)               // a string always encodes
	buf.Truncate(buf.Len() - 1) // Encode's newline
}

// maxSuggested bounds how many missing names get "Did you mean"
// suggestions: each costs a pass over the pool.
const maxSuggested = 10

// writeSuggestions adds " Did you mean: x, y?" for names close to missing
// ones (the first maxSuggested of them).
func (h *Hub) writeSuggestions(b *strings.Builder, missing []string, pool []*Tool) {
	names := make([]string, len(pool))
	for i, t := range pool {
		names[i] = t.Name
	}
	var close []string
	for _, m := range missing[:min(len(missing), maxSuggested)] {
		for _, n := range closest.Closest(m, names, 3) {
			if !slices.Contains(close, n) {
				close = append(close, n)
			}
		}
	}
	if len(close) > 0 {
		fmt.Fprintf(b, " Did you mean: %s?", strings.Join(close, ", "))
	}
}

func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}

type param struct {
	name, typ, desc string
	required        bool
}

// schemaParams lists a schema's top-level properties in schema order.
func schemaParams(raw json.RawMessage) []param {
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(raw, &top) != nil || len(top.Properties) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []param
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		name, _ := tok.(string)
		var prop struct {
			Type        any    `json:"type"`
			Description string `json:"description"`
		}
		var rawProp json.RawMessage
		if dec.Decode(&rawProp) != nil {
			return out
		}
		json.Unmarshal(rawProp, &prop)
		typ := "any"
		if t, ok := prop.Type.(string); ok && t != "" {
			typ = t
		}
		out = append(out, param{name: name, typ: typ, desc: strings.Join(strings.Fields(prop.Description), " "), required: slices.Contains(top.Required, name)})
	}
	return out
}

func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// decodeArgs decodes tool arguments; absent arguments are an empty object.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil
	}
	return json.Unmarshal(raw, v)
}

// callArgs are call_tool's arguments.
type callArgs struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// callTool implements call_tool: a way to call a loaded tool for clients
// that do not refresh their tool list within a turn.
func (s *Session) callTool(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	var args callArgs
	if err := decodeArgs(req.Params.Arguments, &args); err != nil || args.Name == "" {
		return s.fail(ctx, "Error: call_tool needs {\"name\": \"<tool name>\", \"arguments\": {...}}."), nil
	}
	if isMetaTool(args.Name) {
		return s.fail(ctx, fmt.Sprintf("Error: call '%s' directly, not through call_tool.", ShownName(args.Name))), nil
	}
	arguments := bytes.TrimSpace(args.Arguments)
	if len(arguments) > 0 && arguments[0] == '"' {
		// Some models send the arguments as a JSON string.
		var inner string
		if err := json.Unmarshal(arguments, &inner); err != nil || !json.Valid([]byte(inner)) {
			return s.fail(ctx, "Error: call_tool 'arguments' is a string that is not valid JSON; pass an object."), nil
		}
		arguments = []byte(inner)
	}
	if string(arguments) == "null" {
		arguments = nil
	}
	inner := &mcp.CallToolParamsRaw{Meta: req.Params.Meta, Name: args.Name, Arguments: arguments}
	c := s.hub.Catalog()
	t, ok := c.Tool(args.Name)
	if !ok || !s.visible(t) {
		s.traceRefused(ctx)
		if err := s.hub.unlistedServerError(args.Name); err != nil {
			return errorResult("Error: " + err.Error()), nil
		}
		return errorResult("Error: " + s.unknownToolMessage(c, args.Name)), nil
	}
	if t.Deferred && !s.isLoaded(t.Name) && !isModern(req) {
		if !s.hub.Config().Discovery.AutoLoadOnCall {
			s.traceRefused(ctx)
			return notLoaded(t.Name), nil
		}
		s.load(ctx, req.Session, c, []*Tool{t})
	}
	return s.callUpstream(ctx, t, inner)
}

// fail is an isError result that the hub reports as refused (CallTrace).
func (s *Session) fail(ctx context.Context, text string) *mcp.CallToolResult {
	s.traceRefused(ctx)
	return errorResult(text)
}
