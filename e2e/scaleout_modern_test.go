//go:build linux

package e2e

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// TestScaleOutModernNoStore is issue 23's acceptance 4: a client of the
// 2026-07-28 era searches and calls through plain round-robin across two
// replicas without a session_store, and goes on when one replica is
// killed. Nothing of the client's lives on a replica between requests:
// there is no session to lose.
func TestScaleOutModernNoStore(t *testing.T) {
	d := startReplicas(t, func(string) string { return discoveryConfig + "protocol: {modern: true}\n" })
	ids := &sessionIDWatch{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "scaleout-modern-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   d.roundRobin,
		HTTPClient: &http.Client{Transport: ids},
	}, nil)
	if err != nil {
		t.Fatalf("connect through %s: %v", d.roundRobin, err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != modernSpecVersion {
		t.Fatalf("negotiated %q, want %s", v, modernSpecVersion)
	}
	out := callText(t, cs, "search_tools", map[string]any{"query": "evaluate arithmetic expression"})
	if !strings.Contains(out, "calc__evaluate") || !strings.Contains(out, `"expression"`) {
		t.Fatalf("search_tools did not find calc__evaluate with its input schema:\n%s", out)
	}
	listed, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range listed.Tools {
		if tool.Name == "calc__evaluate" {
			t.Fatalf("a modern client's tools/list changed after search_tools: it lists %s", tool.Name)
		}
	}
	viaCallTool := func(n int) {
		t.Helper()
		for i := range n {
			got := callText(t, cs, "call_tool", map[string]any{"name": "calc__evaluate", "arguments": map[string]any{"expression": "6*7"}})
			if !strings.Contains(got, "42") {
				t.Fatalf("call %d: call_tool calc__evaluate 6*7 = %q", i, got)
			}
		}
	}
	viaCallTool(6)
	for i := range d.hubs {
		if !d.calledCalc(t, i) {
			t.Fatalf("hub%d never called calc: round-robin should have spread the calls over both replicas", i+1)
		}
	}
	d.hubs[0].kill(t)
	viaCallTool(6)
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if len(ids.seen) > 0 {
		t.Fatalf("the replicas handed out Mcp-Session-Id %v to a modern client", ids.seen)
	}
}

// sessionIDWatch records any Mcp-Session-Id a response carries.
type sessionIDWatch struct {
	mu   sync.Mutex
	seen []string
}

func (w *sessionIDWatch) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			w.mu.Lock()
			w.seen = append(w.seen, id)
			w.mu.Unlock()
		}
	}
	return resp, err
}
