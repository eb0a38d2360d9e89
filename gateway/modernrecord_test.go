package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// askServer has one tool, ask, that asks the client (elicitation) rounds
// times before it answers, with a tool error when fail is set.
func askServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "test"}, nil)
	type args struct {
		Rounds int  `json:"rounds"`
		Fail   bool `json:"fail"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Ask the user rounds times, then answer."},
		func(ctx context.Context, req *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
			var answers []string
			for i := range in.Rounds {
				res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: fmt.Sprintf("question %d", i),
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}}}})
				if err != nil {
					return nil, nil, err
				}
				answers = append(answers, fmt.Sprint(res.Content["answer"]))
			}
			return &mcp.CallToolResult{IsError: in.Fail, Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(answers, ",")}}}, nil, nil
		})
	return s
}

// TestModernCallRecordedOnce: a 2026-07-28 call whose upstream asks the
// client for input, over however many input_required rounds, is one
// audit line and one metrics observation, with its server, its tool and
// its real outcome; the input_required answers are not errors.
func TestModernCallRecordedOnce(t *testing.T) {
	cfg := fixture.NewConfig(hub.Discovery{}, fixture.ServerEntry("ask"))
	on := true
	cfg.Protocol = config.Protocol{Modern: &on}
	cfg.Audit.File = filepath.Join(t.TempDir(), "audit.jsonl")
	cfg.HashKey = "modern-record-test-hash-key-0123456789"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := New(ctx, cfg, Options{Hub: hub.Options{Logger: slog.New(slog.DiscardHandler), StartupWait: 20 * time.Second,
		Builtin: func(string, map[string]string) (*mcp.Server, error) { return askServer(), nil }}, OpenStore: openStore})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.HTTPHandler(nil))
	t.Cleanup(func() { srv.Close(); g.Close() })

	asked := 0
	client := mcp.NewClient(&mcp.Implementation{Name: "modern-record-test", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
		},
	})
	cs, err := client.Connect(fixture.Context(t), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != hub.ModernProtocol {
		t.Fatalf("negotiated %s, want %s", got, hub.ModernProtocol)
	}

	calls := []struct {
		rounds  int
		fail    bool
		outcome string
	}{{0, false, "ok"}, {1, false, "ok"}, {3, true, "tool_error"}}
	for _, c := range calls {
		res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "ask__ask", Arguments: map[string]any{"rounds": c.rounds, "fail": c.fail}})
		if err != nil || res.IsError != c.fail {
			t.Fatalf("ask %d rounds: %v %v", c.rounds, fixture.JSON(t, res), err)
		}
	}
	if asked != 4 {
		t.Fatalf("the client was asked %d times, want 4", asked)
	}

	var lines []map[string]any
	for _, e := range auditLines(t, cfg.Audit.File) {
		if e["method"] == "tools/call" {
			lines = append(lines, e)
		}
	}
	if len(lines) != len(calls) {
		t.Fatalf("%d tools/call audit lines for %d calls, want one each: %v", len(lines), len(calls), lines)
	}
	for i, c := range calls {
		if e := lines[i]; e["tool"] != "ask__ask" || e["server"] != "ask" || e["outcome"] != c.outcome {
			t.Errorf("call of %d rounds audited as %v, want tool ask__ask, server ask, outcome %s", c.rounds, e, c.outcome)
		}
	}

	_, body, _ := gwGet(t, srv.URL+"/metrics", nil)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]float64{}
	for _, m := range families["mcp_hub_tool_calls_total"].GetMetric() {
		key := ""
		for _, lp := range m.Label {
			key += lp.GetName() + "=" + lp.GetValue() + " "
		}
		counts[strings.TrimSpace(key)] = m.Counter.GetValue()
	}
	want := map[string]float64{"outcome=ok server=ask tool=ask": 2, "outcome=tool_error server=ask tool=ask": 1}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("mcp_hub_tool_calls_total = %v, want %v", counts, want)
	}
}
