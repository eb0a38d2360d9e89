package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestMetricsCountCalls: /metrics counts exactly the calls made, by server,
// tool and outcome, and the searches and tools they loaded; promtool
// accepts the exposition (acceptance 1).
func TestMetricsCountCalls(t *testing.T) {
	t.Parallel()
	g := &gwUpstream{}
	cfg := gwConfig()
	cfg.Auth.Tokens = []config.Token{{Name: "ops", Value: "metrics-token-1234"}}
	_, url, _ := gwHub(t, cfg, g)
	auth := map[string]string{"Authorization": "Bearer metrics-token-1234"}
	cs, err := fixture.HTTPClient(t, url+"/mcp", auth)
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		tool  string
		times int
	}{{"gw__ok", 3}, {"gw__fail", 2}, {"gw__broken", 1}, {"gw__slow", 1}, {"no_such_tool", 2}}
	for _, c := range calls {
		for range c.times {
			gwTool(t, cs, c.tool, map[string]any{"text": "x"}) // outcomes are read from /metrics
		}
	}
	for range 2 { // the first loads both weather tools, the second finds them loaded
		if res, err := gwTool(t, cs, hub.SearchToolsName, map[string]any{"query": "weather forecast"}); err != nil || res.IsError {
			t.Fatalf("search_tools: %v %v", err, res)
		}
	}
	if _, err := gwTool(t, cs, "weather__get_forecast", map[string]any{"location": "Oslo"}); err != nil {
		t.Fatal(err)
	}

	status, body, _ := fixture.Get(t, url+"/metrics", auth)
	if status != 200 {
		t.Fatalf("/metrics: %d %s", status, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("parsing /metrics: %v\n%s", err, body)
	}
	value := func(name string, labels ...string) float64 {
		t.Helper()
		mf, ok := families[name]
		if !ok {
			t.Fatalf("/metrics has no %s", name)
		}
	next:
		for _, m := range mf.Metric {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.Label {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
		return 0
	}
	cases := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mcp_hub_tool_calls_total", []string{"server", "gw", "tool", "ok", "outcome", "ok"}, 3},
		{"mcp_hub_tool_calls_total", []string{"server", "gw", "tool", "fail", "outcome", "tool_error"}, 2},
		{"mcp_hub_tool_calls_total", []string{"server", "gw", "tool", "broken", "outcome", "error"}, 1},
		{"mcp_hub_tool_calls_total", []string{"server", "gw", "tool", "slow", "outcome", "timeout"}, 1},
		{"mcp_hub_tool_calls_total", []string{"server", "_hub", "tool", "other", "outcome", "error"}, 2},
		{"mcp_hub_tool_calls_total", []string{"server", "weather", "tool", "get_forecast", "outcome", "ok"}, 1},
		{"mcp_hub_tool_call_duration_seconds", []string{"server", "gw"}, 7},
		{"mcp_hub_search_requests_total", nil, 2},
		{"mcp_hub_search_duration_seconds", nil, 2},
		{"mcp_hub_tools_loaded_total", nil, 2},
		{"mcp_hub_sessions", nil, 1},
		{"mcp_hub_upstream_up", []string{"server", "gw"}, 1},
		{"mcp_hub_upstream_up", []string{"server", "weather"}, 1},
		{"mcp_hub_upstream_restarts_total", []string{"server", "gw"}, 0},
	}
	for _, c := range cases {
		if got := value(c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// No label value comes from the client: the unknown names are "other".
	if strings.Contains(body, "no_such_tool") {
		t.Error("a client-chosen tool name became a label value")
	}
	for _, name := range []string{"go_goroutines", "process_cpu_seconds_total"} {
		if _, ok := families[name]; !ok {
			t.Errorf("/metrics lacks the Go/process collector's %s", name)
		}
	}

	promtool := needProgram(t, "promtool", "prometheus")
	file := filepath.Join(t.TempDir(), "metrics.txt")
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", fmt.Sprintf("%s check metrics < %s", promtool, file))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestMetricsGuarded: /metrics has the auth and Host check of /mcp.
func TestMetricsGuarded(t *testing.T) {
	cfg := gwConfig()
	cfg.Auth.Tokens = []config.Token{{Value: "metrics-token-1234"}}
	_, url, _ := gwHub(t, cfg, &gwUpstream{})
	for _, c := range []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"no token", nil, 401},
		{"wrong token", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"token", map[string]string{"Authorization": "Bearer metrics-token-1234"}, 200},
		{"rebinding Host", map[string]string{"Authorization": "Bearer metrics-token-1234", "Host": "evil.example"}, 403},
		{"foreign Origin", map[string]string{"Authorization": "Bearer metrics-token-1234", "Origin": "https://evil.example"}, 403},
	} {
		if status, body, _ := fixture.Get(t, url+"/metrics", c.headers); status != c.want {
			t.Errorf("%s: /metrics status %d (%.80s), want %d", c.name, status, body, c.want)
		}
	}
}

// TestMetricsPerHub: two hubs in one process keep their own counters.
func TestMetricsPerHub(t *testing.T) {
	_, url1, _ := gwHub(t, gwConfig(), &gwUpstream{})
	_, url2, _ := gwHub(t, gwConfig(), &gwUpstream{})
	cs, err := fixture.HTTPClient(t, url1+"/mcp", nil)
	if err != nil {
		t.Fatal(err)
	}
	gwTool(t, cs, "gw__ok", nil)
	_, b1, _ := fixture.Get(t, url1+"/metrics", nil)
	_, b2, _ := fixture.Get(t, url2+"/metrics", nil)
	line := `mcp_hub_tool_calls_total{outcome="ok",server="gw",tool="ok"} 1`
	if !strings.Contains(b1, line) || strings.Contains(b2, `tool="ok"`) {
		t.Errorf("hub 1 should count the call and hub 2 not:\nhub 1 has it: %v\nhub 2 has it: %v", strings.Contains(b1, line), strings.Contains(b2, `tool="ok"`))
	}
}

// BenchmarkCallObservation is what the gateway adds to each forwarded
// tools/call for metrics (and for tracing and the audit log when off): the
// observe middleware and its CallTrace's UpstreamStart and UpstreamDone. Compare it with a call's CPU
// time in the proxy benchmark (hundreds of µs).
//
//	go test -run '^$' -bench CallObservation -benchmem ./gateway/
func BenchmarkCallObservation(b *testing.B) {
	h := newTestHub(b, fixture.SmallConfig(), fixture.NewServers())
	s, err := h.hub.NewSession(hub.SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	tool, _ := h.hub.Catalog().Tool("clock__now")
	res := &upstream.RawResult{JSON: json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)}
	forward := func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		params := &mcp.CallToolParams{Name: "now"}
		r := &hub.UpstreamRequest{Method: "tools/call", Server: tool.Server, Tool: tool, Meta: &params.Meta, Start: time.Now()}
		ctx = h.callTrace.UpstreamStart(ctx, r)
		h.callTrace.UpstreamDone(ctx, r, res, nil)
		return res, nil
	}
	handler := h.observe(s)(forward)
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "clock__now", Arguments: json.RawMessage(`{}`)}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		handler(ctx, "tools/call", req)
	}
}
