//go:build linux

package e2e

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// discoveryConfig has one eager builtin server and two deferred ones.
const discoveryConfig = `
servers:
  time: {builtin: time, defer_loading: false}
  calc: {builtin: calc}
  text: {builtin: text}
discovery: {enabled: true, defer_all: true}
`

// listChangedCounter counts notifications/tools/list_changed.
type listChangedCounter struct{ n atomic.Int32 }

func (c *listChangedCounter) client() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { c.n.Add(1) },
	})
}

func (c *listChangedCounter) waitFor(t *testing.T, want int32) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for c.n.Load() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := c.n.Load(); got != want {
		t.Fatalf("list_changed notifications: got %d, want %d", got, want)
	}
}

func toolNames(t *testing.T, cs *mcp.ClientSession) []string {
	t.Helper()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		t.Fatalf("call %s: error result: %s", name, b.String())
	}
	return b.String()
}

// writeConfig writes yaml to a hub.yaml of the test's own.
func writeConfig(t *testing.T, yaml string) string { return fixture.WriteFile(t, "hub.yaml", yaml) }

// discoveryFlow is the user story of issue 3: search, load, notification,
// call directly and through call_tool.
func discoveryFlow(t *testing.T, cs *mcp.ClientSession, counter *listChangedCounter) {
	t.Helper()
	eager := []string{"call_tool", "search_tools", "time__add_duration", "time__convert_time", "time__current_time", "time__day_of_week", "time__time_difference"}
	if got := toolNames(t, cs); !slices.Equal(got, eager) {
		t.Fatalf("initial tools/list = %v, want %v", got, eager)
	}
	out := callText(t, cs, "search_tools", map[string]any{"query": "evaluate an arithmetic expression"})
	if !strings.Contains(out, "calc__evaluate") {
		t.Fatalf("search did not find calc__evaluate:\n%s", out)
	}
	counter.waitFor(t, 1)
	if got := toolNames(t, cs); !slices.Contains(got, "calc__evaluate") {
		t.Fatalf("tools/list after search = %v, want calc__evaluate in it", got)
	}
	if got := callText(t, cs, "calc__evaluate", map[string]any{"expression": "6*7"}); !strings.Contains(got, "42") {
		t.Fatalf("calc__evaluate 6*7 = %q", got)
	}
	if got := callText(t, cs, "call_tool", map[string]any{"name": "calc__evaluate", "arguments": `{"expression":"2^10"}`}); !strings.Contains(got, "1024") {
		t.Fatalf("call_tool calc__evaluate 2^10 = %q", got)
	}
}

func TestDiscoveryOverStdio(t *testing.T) {
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "--config", writeConfig(t, discoveryConfig), "serve")
	cmd.Env = append(os.Environ(), envAsMain+"=1")
	var counter listChangedCounter
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := counter.client().Connect(ctx, &mcp.CommandTransport{Command: cmd}, fixture.Legacy())
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	discoveryFlow(t, cs, &counter)
}

func TestDiscoveryOverHTTPSessionsAreSeparate(t *testing.T) {
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	startChild(t, "hub", []string{envAsMain + "=1"}, self, "--config", writeConfig(t, discoveryConfig), "serve", "--http", addr)
	waitHealthy(t, "http://"+addr+"/healthz")
	ctx := context.Background()
	url := "http://" + addr + "/mcp"

	var ca, cb listChangedCounter
	a, err := ca.client().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, fixture.Legacy())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := cb.client().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, fixture.Legacy())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	discoveryFlow(t, a, &ca)
	callText(t, b, "search_tools", map[string]any{"tool_names": []string{"text__slugify"}})
	cb.waitFor(t, 1)

	gotA, gotB := toolNames(t, a), toolNames(t, b)
	if !slices.Contains(gotA, "calc__evaluate") || slices.Contains(gotA, "text__slugify") {
		t.Errorf("session A sees %v: want its own calc__evaluate and not B's text__slugify", gotA)
	}
	if !slices.Contains(gotB, "text__slugify") || slices.Contains(gotB, "calc__evaluate") {
		t.Errorf("session B sees %v: want its own text__slugify and not A's calc__evaluate", gotB)
	}
	// B never loaded calc__evaluate: calling it is refused and never reaches calc.
	res, err := b.CallTool(ctx, &mcp.CallToolParams{Name: "calc__evaluate", Arguments: map[string]any{"expression": "1+1"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "is not yet loaded") {
		t.Errorf("session B calling A's tool: got %+v, want the not-yet-loaded error", res.Content)
	}
	if ca.n.Load() != 1 {
		t.Errorf("session A got %d list_changed, want 1 (B's load must not notify A)", ca.n.Load())
	}
}

func waitHealthy(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("hub not healthy at %s", url)
}
