package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/tiktoken-go/tokenizer"

	"github.com/mcp-hub/mcp-hub/index"
)

// TokenReport compares what a client's first tools/list costs in tokens.
type TokenReport struct {
	AllTools  int     // every tool exposed
	Discovery int     // discovery on, every server deferred: only the meta-tools
	SavingPct float64 // 100 * (AllTools - Discovery) / AllTools
}

// CountTokens counts the o200k_base tokens of tool definitions as a client
// receives them (each definition's compact JSON). The encoder is embedded in
// the binary: no network access.
func CountTokens(defs []json.RawMessage) (int, error) {
	codec, err := tokenizer.Get(tokenizer.O200kBase)
	if err != nil {
		return 0, fmt.Errorf("load o200k_base: %w", err)
	}
	total := 0
	for i, d := range defs {
		var buf bytes.Buffer
		if err := json.Compact(&buf, d); err != nil {
			return 0, fmt.Errorf("tool definition %d: %w", i, err)
		}
		n, err := codec.Count(buf.String())
		if err != nil {
			return 0, fmt.Errorf("count tokens of definition %d: %w", i, err)
		}
		total += n
	}
	return total, nil
}

// CompareTokens counts both lists of definitions: all tools exposed versus
// the meta-tools of discovery.
func CompareTokens(all, discovery []json.RawMessage) (TokenReport, error) {
	a, err := CountTokens(all)
	if err != nil {
		return TokenReport{}, fmt.Errorf("all tools: %w", err)
	}
	d, err := CountTokens(discovery)
	if err != nil {
		return TokenReport{}, fmt.Errorf("meta-tools: %w", err)
	}
	r := TokenReport{AllTools: a, Discovery: d}
	if a > 0 {
		r.SavingPct = 100 * float64(a-d) / float64(a)
	}
	return r, nil
}

// toolDef is a tool definition as tools/list carries it (the fields that
// cost tokens).
type toolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// ToolDefinitions returns the definitions of tools as a plain aggregator
// would list them. A missing or invalid schema becomes {"type":"object"}.
func ToolDefinitions(tools []index.Tool) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, 0, len(tools))
	for _, t := range tools {
		schema := t.InputSchema
		if len(schema) == 0 || !json.Valid(schema) {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		b, err := json.Marshal(toolDef{Name: t.Name, Description: t.Description, InputSchema: schema})
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// SpecMetaToolDefinitions builds the search_tools and call_tool definitions
// a client sees when every server is deferred, following spec D1/D2 of
// search_tools.md. It stands in for the hub's own builder: once the hub
// exports it, feed its output to CompareTokens instead.
func SpecMetaToolDefinitions(tools []index.Tool) ([]json.RawMessage, error) {
	search := map[string]any{
		"name": "search_tools",
		"description": "Find and load tools that are not listed yet. The servers below have deferred tools: " +
			"search them with a query describing what you want to do, list one server with server_name, " +
			"or load exact tool_names. Loaded tools can then be called directly or through call_tool.\n\n" +
			Manifest(tools),
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query":       map[string]any{"type": "string", "description": "What you want to do, in natural language."},
				"server_name": map[string]any{"type": "string", "description": "Only tools of this server."},
				"tool_names":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "Exact tool names to load."},
			},
		},
	}
	call := map[string]any{
		"name":        "call_tool",
		"description": "Call a tool loaded by search_tools, by its exact name, with its arguments.",
		"inputSchema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":      map[string]any{"type": "string", "description": "Exact tool name."},
				"arguments": map[string]any{"type": "object", "description": "Arguments of the tool."},
			},
			"required": []string{"name"},
		},
	}
	var out []json.RawMessage
	for _, d := range []any{search, call} {
		b, err := json.Marshal(d)
		if err != nil {
			return nil, fmt.Errorf("meta-tool definition: %w", err)
		}
		out = append(out, b)
	}
	return out, nil
}

// Manifest renders spec D2: one entry per server, sorted by name, with its
// tool count, its tool names (first four and "... and N more" past ten) and
// an indented one-line summary from the first sentences of its tool
// descriptions (at most 80 characters).
func Manifest(tools []index.Tool) string {
	byServer := map[string][]index.Tool{}
	for _, t := range tools {
		byServer[t.Server] = append(byServer[t.Server], t)
	}
	servers := make([]string, 0, len(byServer))
	for s := range byServer {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	var b strings.Builder
	for _, s := range servers {
		ts := byServer[s]
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.Name
		}
		sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
		noun := "tools"
		if len(ts) == 1 {
			noun = "tool"
		}
		listed := strings.Join(names, ", ")
		if len(names) > 10 {
			listed = strings.Join(names[:4], ", ") + fmt.Sprintf(", ... and %d more", len(names)-4)
		}
		fmt.Fprintf(&b, "- %s (%d %s): %s\n", s, len(ts), noun, listed)
		var sentences []string
		for _, t := range ts {
			if f := firstSentence(t.Description); f != "" {
				sentences = append(sentences, f)
			}
		}
		if sum := cut(strings.Join(sentences, " "), 80); sum != "" {
			fmt.Fprintf(&b, "  %s\n", sum)
		}
	}
	return b.String()
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimRightFunc(string(r[:n-3]), unicode.IsSpace) + "..."
}

// naturalLess orders digit runs by value, so tool_2 sorts before tool_10.
func naturalLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := leadingDigits(a), leadingDigits(b)
		if da != "" && db != "" {
			na, _ := strconv.Atoi(da)
			nb, _ := strconv.Atoi(db)
			if na != nb || len(da) != len(db) {
				if na != nb {
					return na < nb
				}
				return len(da) < len(db)
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
