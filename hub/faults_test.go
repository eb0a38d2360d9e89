//go:build unix

package hub

// Upstream faults seen through the hub: real fixture processes that are
// killed, hang, write garbage or offer broken schemas, and what clients
// and /healthz see meanwhile. Helpers are prefixed "fh" (and reuse the
// "sec" ones of security_test.go).

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func fhStatus(h *Hub, name string) upstream.Status {
	for _, st := range h.Upstreams() {
		if st.Name == name {
			return st
		}
	}
	return upstream.Status{}
}

// TestHubFaultRestartKeepsLoadedTools: a stdio server killed with -9 during
// a call: the call gets an isError result naming the server and saying it
// restarted; the server is restarted and re-listed; tools the session
// loaded stay loaded; the session hears list_changed only when the
// server's tools changed.
func TestHubFaultRestartKeepsLoadedTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	flag := filepath.Join(dir, "more-tools")
	// With the flag file present the server starts with one more tool.
	script := fmt.Sprintf(`if [ -e %q ]; then exec %q -name fx -features -tools extra; fi; exec %q -name fx -features`, flag, fixture.Build(t), fixture.Build(t))
	fx := &config.Server{Upstream: config.Upstream{Command: "/bin/sh", Args: []string{"-c", script}}}
	fx.Name = "fx"
	cfg := fixture.RestartingConfig(fx, fixture.StdioEntry(t, "other", "-tools", "a"))
	cfg.Discovery = config.Discovery{Enabled: true}
	yes, no := true, false
	fx.DeferLoading, cfg.Servers["other"].DeferLoading = &yes, &no
	h, lg := secHub(t, cfg)
	c := fixture.ConnectCounting(t, h)
	if text, isErr := c.Call(t, SearchToolsName, map[string]any{"tool_names": []string{"fx__sleep", "fx__pid"}}); isErr {
		t.Fatalf("search_tools: %s", text)
	}
	// The list changes at once, the list_changed follows (debounced).
	waitFor(t, "the loaded tools listed and announced", func() bool {
		return c.Changed.Load() > 0 && strings.Contains(strings.Join(c.ToolNames(t), ","), "fx__sleep")
	})
	pid := c.PID(t, "fx__pid")

	// A call in flight when the process is killed.
	type result struct {
		text  string
		isErr bool
	}
	done := make(chan result, 1)
	go func() {
		text, isErr := c.Call(t, "fx__sleep", map[string]any{"ms": 30000})
		done <- result{text, isErr}
	}()
	lg.WaitFor(t, "the call to reach the server", 30*time.Second, func(s string) bool { return strings.Contains(s, "sleeping 30000 ms") })
	settled := c.Changed.Load()
	syscall.Kill(pid, syscall.SIGKILL)
	select {
	case r := <-done:
		if !r.isErr || !strings.Contains(r.text, "'fx'") || !strings.Contains(r.text, "restart") {
			t.Errorf("call in flight: isError=%v %q, want isError naming fx and saying it restarted", r.isErr, r.text)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("call in flight did not return")
	}
	waitFor(t, "restarted", func() bool { st := fhStatus(h, "fx"); return st.Restarts == 1 && st.State == upstream.StateReady })
	// Loaded tools survive and work; the other server was never disturbed.
	names := strings.Join(c.ToolNames(t), ",")
	if !strings.Contains(names, "fx__sleep") || !strings.Contains(names, "fx__pid") || !strings.Contains(names, "other__a") {
		t.Errorf("after restart the session lists %s", names)
	}
	if pid2 := c.PID(t, "fx__pid"); pid2 == pid {
		t.Error("same pid after restart")
	}
	time.Sleep(300 * time.Millisecond) // a list_changed would be debounced ~10ms
	if n := c.Changed.Load(); n != settled {
		t.Errorf("%d list_changed after a restart that changed nothing", n-settled)
	}

	// Now the server comes back with another tool: the session is told.
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(c.PID(t, "fx__pid"), syscall.SIGKILL)
	waitFor(t, "second restart", func() bool { st := fhStatus(h, "fx"); return st.Restarts == 2 && st.State == upstream.StateReady })
	waitFor(t, "list_changed", func() bool { return c.Changed.Load() > settled })
	if _, ok := h.Catalog().Tool("fx__extra"); !ok {
		t.Error("fx__extra not in the catalog after the restart")
	}
	if text, isErr := c.Call(t, "fx__sleep", map[string]any{"ms": 1}); isErr || text != "slept" {
		t.Errorf("loaded tool after the second restart: %q", text)
	}
}

// TestHubFaultHungUpstream: a call that exceeds the server's timeout is
// cancelled upstream (the fixture's sleep sees it) and returns isError;
// meanwhile other servers and other sessions are served.
func TestHubFaultHungUpstream(t *testing.T) {
	t.Parallel()
	slow := fixture.StdioEntry(t, "slow", "-features")
	slow.Timeout = config.Duration(4 * time.Second)
	h, lg := secHub(t, fixture.RestartingConfig(slow, fixture.StdioEntry(t, "other", "-features")))
	a, b := fixture.ConnectCounting(t, h), fixture.ConnectCounting(t, h)
	type result struct {
		text  string
		isErr bool
		took  time.Duration
	}
	done := make(chan result, 1)
	begin := time.Now()
	go func() {
		text, isErr := a.Call(t, "slow__sleep", map[string]any{"ms": 60000})
		done <- result{text, isErr, time.Since(begin)}
	}()
	lg.WaitFor(t, "the call to reach the server", 30*time.Second, func(s string) bool { return strings.Contains(s, "sleeping 60000 ms") })
	var wg sync.WaitGroup
	for _, c := range []*fixture.CountingClient{a, b} {
		for _, tool := range []string{"other__sleep", "slow__sleep"} {
			wg.Go(func() {
				s := time.Now()
				if text, isErr := c.Call(t, tool, map[string]any{"ms": 1}); isErr || text != "slept" {
					t.Errorf("%s beside a hung call: %q", tool, text)
				}
				// Well under the hung call's timeout, with room for a loaded machine.
				if d := time.Since(s); d > 2500*time.Millisecond {
					t.Errorf("%s beside a hung call took %v", tool, d)
				}
			})
		}
	}
	wg.Wait()
	r := <-done
	if !r.isErr || !strings.Contains(r.text, "'slow'") || !strings.Contains(r.text, "timed out after 4s") {
		t.Errorf("hung call: isError=%v %q", r.isErr, r.text)
	}
	if r.took > 20*time.Second {
		t.Errorf("hung call returned after %v", r.took)
	}
	waitFor(t, "the upstream to see the cancellation", func() bool { return strings.Contains(lg.String(), "sleep cancelled") })
	if st := fhStatus(h, "slow"); st.State != upstream.StateReady || st.Restarts != 0 {
		t.Errorf("slow after a timeout: %+v", st)
	}
}

// TestHubFaultIsolation: one server offering invalid schemas and one
// crashing at start are reported (state, last error, catalog problems),
// one writing garbage on stdout is served anyway (the line is skipped), and
// the hub serves everything else.
func TestHubFaultIsolation(t *testing.T) {
	raw := fixture.RawMCPServer(t, `[
		{"name":"good","inputSchema":{"type":"object"}},
		{"name":"schema_string","inputSchema":"not a schema"},
		{"name":"schema_array","inputSchema":[1,2]},
		{"name":"schema_badtype","inputSchema":{"type":"string"}},
		{"name":"bad_header","inputSchema":{"type":"object","properties":{"h":{"type":"string","x-mcp-header":"bad header\n"}}}}
	]`)
	broken := &config.Server{Upstream: config.Upstream{URL: raw + "/mcp"}}
	broken.Name = "broken"
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "garbage", "-tools", "g", "-garbage"), broken, fixture.StdioEntry(t, "dead", "-fail-start"), fixture.StdioEntry(t, "good", "-features"))
	cfg.Restart.UnhealthyAfter = 2
	cfg.Restart.Cooldown = config.Duration(time.Minute)
	h, _ := secHub(t, cfg)
	waitFor(t, "dead unhealthy, garbage ready", func() bool {
		return fhStatus(h, "garbage").State == upstream.StateReady && fhStatus(h, "dead").State == upstream.StateUnhealthy
	})
	if st := fhStatus(h, "dead"); !strings.Contains(st.LastError, "failing at start") {
		t.Errorf("dead: last error %q should carry the server's last stderr line", st.LastError)
	}
	c := fixture.ConnectCounting(t, h)
	names := strings.Join(c.ToolNames(t), ",")
	for _, want := range []string{"good__sleep", "broken__good"} {
		if !strings.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %s", want, names)
		}
	}
	if text, isErr := c.Call(t, "good__sleep", map[string]any{"ms": 1}); isErr || text != "slept" {
		t.Errorf("good__sleep: %q", text)
	}
	if text, isErr := c.Call(t, "broken__good", nil); isErr || !strings.HasPrefix(text, "good:") {
		t.Errorf("broken__good: %q", text)
	}
	problems := strings.Join(h.Catalog().Problems, "\n")
	for _, bad := range []string{"schema_string", "schema_array"} {
		if !strings.Contains(problems, bad) {
			t.Errorf("problems do not report %s:\n%s", bad, problems)
		}
		if strings.Contains(names, "broken__"+bad) {
			t.Errorf("%s is served despite its schema", bad)
		}
	}
	if text, isErr := c.Call(t, "garbage__g", map[string]any{"x": 1}); isErr || !strings.Contains(text, "garbage:g:") {
		t.Errorf("garbage__g: %q", text)
	}
}
