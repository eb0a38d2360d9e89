package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
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
// times before it answers, with a tool error when fail is set; with hold
// it then tells held and waits for its cancellation.
func askServer(held chan<- struct{}) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "ask", Version: "test"}, nil)
	type args struct {
		Rounds int  `json:"rounds"`
		Fail   bool `json:"fail,omitempty"`
		Hold   bool `json:"hold,omitempty"`
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
			if in.Hold {
				held <- struct{}{}
				<-ctx.Done()
				return nil, nil, ctx.Err()
			}
			return &mcp.CallToolResult{IsError: in.Fail, Content: []mcp.Content{&mcp.TextContent{Text: strings.Join(answers, ",")}}}, nil, nil
		})
	return s
}

// askGateway serves a gateway with the ask server over HTTP, protocol.modern
// on and the audit log in a temporary file (returned).
func askGateway(t *testing.T, held chan<- struct{}) (url, auditFile string) {
	t.Helper()
	cfg := fixture.NewConfig(config.Discovery{}, fixture.ServerEntry("ask"))
	on := true
	cfg.Protocol = config.Protocol{Modern: &on}
	cfg.Audit.File = filepath.Join(t.TempDir(), "audit.jsonl")
	cfg.HashKey = "modern-record-test-hash-key-0123456789"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := New(ctx, cfg, Options{Hub: hub.Options{Logger: slog.New(slog.DiscardHandler), StartupWait: 20 * time.Second,
		Builtin: func(string, map[string]string) (*mcp.Server, error) { return askServer(held), nil }}, OpenStore: openStore})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.HTTPHandler(nil))
	t.Cleanup(func() { srv.Close(); g.Close() })
	return srv.URL, cfg.Audit.File
}

// askClient connects a 2026-07-28 client that answers every elicitation
// yes, counting them.
func askClient(t *testing.T, url string, asked *atomic.Int32) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "modern-record-test", Version: "0"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "yes"}}, nil
		},
	})
	cs, err := client.Connect(fixture.Context(t), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if got := cs.InitializeResult().ProtocolVersion; got != hub.ModernProtocol {
		t.Fatalf("negotiated %s, want %s", got, hub.ModernProtocol)
	}
	return cs
}

// toolCallLines are the audit file's tools/call lines.
func toolCallLines(t *testing.T, file string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, e := range auditLines(t, file) {
		if e["method"] == "tools/call" {
			lines = append(lines, e)
		}
	}
	return lines
}

// TestModernCallRecordedOnce: a 2026-07-28 call whose upstream asks the
// client for input, over however many input_required rounds, is one
// audit line and one metrics observation, with its server, its tool and
// its real outcome; the input_required answers are not errors.
func TestModernCallRecordedOnce(t *testing.T) {
	url, auditFile := askGateway(t, nil)
	var asked atomic.Int32
	cs := askClient(t, url, &asked)
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
	if n := asked.Load(); n != 4 {
		t.Fatalf("the client was asked %d times, want 4", n)
	}

	lines := toolCallLines(t, auditFile)
	if len(lines) != len(calls) {
		t.Fatalf("%d tools/call audit lines for %d calls, want one each: %v", len(lines), len(calls), lines)
	}
	for i, c := range calls {
		if e := lines[i]; e["tool"] != "ask__ask" || e["server"] != "ask" || e["outcome"] != c.outcome {
			t.Errorf("call of %d rounds audited as %v, want tool ask__ask, server ask, outcome %s", c.rounds, e, c.outcome)
		}
	}

	_, body, _ := fixture.Get(t, url+"/metrics", nil)
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

// TestModernCallCancelledInRetry: a client that gives up on a call while
// its retry waits (the upstream has the answer and is still at work) gets
// the call recorded once, while the upstream's own end of it, cancelled,
// is noted at the same time on another goroutine (the race detector
// watches the two).
func TestModernCallCancelledInRetry(t *testing.T) {
	held := make(chan struct{}, 1)
	url, auditFile := askGateway(t, held)
	var asked atomic.Int32
	cs := askClient(t, url, &asked)
	ctx, cancel := context.WithCancel(fixture.Context(t))
	done := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ask__ask", Arguments: map[string]any{"rounds": 1, "hold": true}})
		if err == nil {
			err = fmt.Errorf("answered %s", fixture.JSON(t, res))
		}
		done <- err
	}()
	select {
	case <-held: // the retry brought the answer; the upstream holds the call
	case err := <-done:
		t.Fatalf("the call ended before the upstream held it: %v", err)
	}
	cancel()
	if err := <-done; err == nil || strings.Contains(err.Error(), "answered") {
		t.Fatalf("the cancelled call: %v, want it cancelled", err)
	}
	fixture.Eventually(t, 30*time.Second, "the cancelled call to be audited", func() bool {
		return len(toolCallLines(t, auditFile)) > 0
	})
	if lines := toolCallLines(t, auditFile); len(lines) != 1 || lines[0]["tool"] != "ask__ask" {
		t.Errorf("a call cancelled in its retry audited as %v, want one line", lines)
	}
}
