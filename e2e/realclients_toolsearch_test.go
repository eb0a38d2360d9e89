//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/hub/eval"
)

// envToolSearchEval names a benchmark set (testdata/bench/<set>) to run
// TestClaudeCodeToolSearch on; it is a measurement (a few minutes), not
// part of the suite.
const envToolSearchEval = "MCP_HUB_TOOLSEARCH_EVAL"

// searchHintKey is the _meta key Claude Code's own tool search reads, as a
// hint for a deferred tool.
const searchHintKey = "anthropic/searchHint"

// toolSearchScript is a scripted model that asks Claude Code's ToolSearch
// each query in turn (one turn, one ToolSearch call per query) and records
// the tools each call brought back.
type toolSearchScript struct {
	queries []string
	mu      sync.Mutex
	found   [][]string     // per query, the tools ToolSearch returned, in order
	answer  map[string]int // tool call id -> query index
	answers int
	errs    []string
}

var functionName = regexp.MustCompile(`"name":\s*"([^"]+)"`)

func (s *toolSearchScript) move(v modelView) modelMove {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !slices.Contains(v.tools, "ToolSearch") {
		return modelMove{text: "OK"} // a side request
	}
	if s.found == nil {
		s.found, s.answer = make([][]string, len(s.queries)), map[string]int{}
	}
	for _, r := range v.results {
		i, ok := s.answer[r.id]
		if r.tool != "ToolSearch" || !ok {
			continue
		}
		delete(s.answer, r.id)
		refs := r.refs
		if len(refs) == 0 { // the <functions> text form
			for _, m := range functionName.FindAllStringSubmatch(r.text, -1) {
				refs = append(refs, m[1])
			}
		}
		if r.isError {
			s.errs = append(s.errs, r.text)
		}
		s.found[i] = refs
		s.answers++
	}
	next := s.answers + len(s.answer) // queries asked so far
	if next >= len(s.queries) {
		return modelMove{text: "Done."}
	}
	id := fmt.Sprintf("toolu_%03d", next)
	s.answer[id] = next
	args, _ := json.Marshal(map[string]any{"query": s.queries[next], "max_results": 5})
	return modelMove{call: &toolCall{id, "ToolSearch", args}}
}

// TestClaudeCodeToolSearch measures Claude Code's own ToolSearch on a
// benchmark set served by the hub with discovery off (every tool listed,
// Claude Code deferring them all), with and without a searchHint on each
// tool (its server's description): the question of issue 24 is whether the
// hint helps Claude Code's search enough to send it.
func TestClaudeCodeToolSearch(t *testing.T) {
	set := os.Getenv(envToolSearchEval)
	bin := os.Getenv("MCP_HUB_CLAUDE")
	if set == "" || bin == "" {
		t.Skipf("a measurement: set %s to a benchmark set (livemcpbench) and MCP_HUB_CLAUDE", envToolSearchEval)
	}
	corpus, err := eval.LoadCorpus("../testdata/bench/" + set + "/corpus.json")
	if err != nil {
		t.Fatal(err)
	}
	queries, err := eval.LoadQueries("../testdata/bench/" + set + "/queries-dev.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	texts := make([]string, len(queries))
	for i, q := range queries {
		texts[i] = q.Query
	}
	hints := map[string]func(eval.Server, eval.CorpusTool) mcp.Meta{
		"no hint": nil,
		"server description as hint": func(s eval.Server, _ eval.CorpusTool) mcp.Meta {
			if s.Description == "" {
				return nil
			}
			return mcp.Meta{searchHintKey: s.Description}
		},
	}
	for _, name := range []string{"no hint", "server description as hint"} {
		t.Run(name, func(t *testing.T) {
			cfg, err := eval.CorpusConfig(corpus, config.Discovery{})
			if err != nil {
				t.Fatal(err)
			}
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			g, err := gateway.New(t.Context(), cfg, gateway.Options{Hub: hub.Options{Logger: quiet, StartupWait: 2 * time.Minute, Builtin: eval.CorpusBuiltin(corpus, hints[name])}})
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			srv := httptest.NewServer(g.HTTPHandler(nil))
			defer srv.Close()
			script := &toolSearchScript{queries: texts}
			model := httptest.NewServer(anthropicMessages(t, script))
			defer model.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			_, err = runClaudeCode(ctx, []string{bin}, t.TempDir(), model.URL, hubServer{url: srv.URL + "/mcp"}, "Find the tools for my tasks.", []string{"ENABLE_TOOL_SEARCH=true"})
			script.mu.Lock()
			defer script.mu.Unlock()
			if err != nil || script.answers < len(queries) {
				t.Fatalf("claude: %v; %d of %d searches answered (errors %v)", err, script.answers, len(queries), script.errs)
			}
			var hit1, hit5, recall5 float64
			for i, q := range queries {
				var gold []string
				for _, gd := range q.Gold {
					gold = append(gold, claudeCode.prefix+hub.ExposedName(gd.Server, gd.Tool))
				}
				got := script.found[i][:min(5, len(script.found[i]))]
				if len(got) > 0 && slices.Contains(gold, got[0]) {
					hit1++
				}
				n := 0
				for _, g := range slices.Compact(slices.Sorted(slices.Values(gold))) {
					if slices.Contains(got, g) {
						n++
					}
				}
				if n > 0 {
					hit5++
				}
				recall5 += float64(n) / float64(len(slices.Compact(slices.Sorted(slices.Values(gold)))))
			}
			nq := float64(len(queries))
			t.Logf("%s, %s: Claude Code ToolSearch hit@1 %.3f, hit@5 %.3f, recall@5 %.3f over %d queries (example result: %s)",
				set, name, hit1/nq, hit5/nq, recall5/nq, len(queries), strings.Join(script.found[0], ", "))
		})
	}
}
