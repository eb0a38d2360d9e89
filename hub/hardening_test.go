//go:build unix

package hub

// Hardening tests of the hub's own boundaries: panics contained per
// request, results over max_result_bytes, and list_changed storms (secrets
// kept out of errors over both fronts: gateway/serve_test.go). Helpers are
// prefixed "hd".

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// hdPanicOnce is a slog.Handler that panics the first time it handles a
// record whose message contains what arm set. The hub logs at each of its
// boundaries (a failed request, a catalog problem, a bad line on stdin), so
// arming it on one of those messages makes real hub code panic there.
type hdPanicOnce struct {
	slog.Handler
	match *atomic.Pointer[string]
}

func newPanicOnce(w io.Writer) hdPanicOnce {
	return hdPanicOnce{Handler: slog.NewTextHandler(w, nil), match: &atomic.Pointer[string]{}}
}

func (h hdPanicOnce) arm(match string) { h.match.Store(&match) }

func (h hdPanicOnce) Handle(ctx context.Context, r slog.Record) error {
	if m := h.match.Load(); m != nil && strings.Contains(r.Message, *m) && h.match.CompareAndSwap(m, nil) {
		panic("test hook: a bug while logging " + r.Message)
	}
	return h.Handler.Handle(ctx, r)
}

func (h hdPanicOnce) WithAttrs(a []slog.Attr) slog.Handler {
	return hdPanicOnce{Handler: h.Handler.WithAttrs(a), match: h.match}
}

func (h hdPanicOnce) WithGroup(g string) slog.Handler {
	return hdPanicOnce{Handler: h.Handler.WithGroup(g), match: h.match}
}

// TestPanicContained: a panic at a boundary of the hub (a client's tool
// call or other request, a catalog rebuild, a line on stdin) fails that
// one request, is logged once with its stack, and leaves the hub, the
// session and the other sessions working.
func TestPanicContained(t *testing.T) {
	lg := &fixture.Log{}
	hook := newPanicOnce(lg)
	fx := fixture.NewServers()
	cfg := fixture.NewConfig(config.Discovery{}, fixture.ServerEntry("weather", fixture.WithPrefix("")), fixture.ServerEntry("math", fixture.WithPrefix("")))
	h, err := New(fixture.Context(t), cfg, Options{Logger: slog.New(hook), StartupWait: 20 * time.Second, Builtin: fx.Builtin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	a, b := connectClient(t, h, ""), connectClient(t, h, "")
	panics := func() int { return strings.Count(lg.String(), "recovered from a panic") }

	t.Run("tools/call", func(t *testing.T) {
		hook.arm("client request failed")
		res, err := a.callErr("no_such_tool", nil)
		if err != nil || !res.IsError || !strings.Contains(fixture.ResultText(res), "internal error in mcp-hub") {
			t.Fatalf("a tool call that panicked: %v %+v, want an isError result", err, res)
		}
		if got := fixture.ResultText(a.call("add", map[string]any{"a": 1, "b": 2})); !strings.Contains(got, "math.add") {
			t.Errorf("the same session's next call: %q", got)
		}
	})
	t.Run("other requests", func(t *testing.T) {
		hook.arm("client request failed")
		_, err := b.cs.GetPrompt(fixture.Context(t), &mcp.GetPromptParams{Name: "nope"})
		rpc, ok := errors.AsType[*jsonrpc.Error](err)
		if !ok || rpc.Code != jsonrpc.CodeInternalError || !strings.Contains(rpc.Message, "internal error in mcp-hub") {
			t.Fatalf("prompts/get that panicked: %v, want JSON-RPC -32603", err)
		}
		if got := fixture.ResultText(b.call("get_current", map[string]any{"location": "Oslo"})); !strings.Contains(got, "weather.get_current") {
			t.Errorf("the session after the panic: %q", got)
		}
	})
	t.Run("catalog rebuild", func(t *testing.T) {
		before := h.Catalog()
		hook.arm("tool name collision")
		n := panics()
		fx.AddTool("math", fixture.Tool{Name: "get_forecast", Description: "collides with weather's", Schema: `{"type":"object"}`})
		waitFor(t, "the rebuild's panic", func() bool { return panics() > n })
		if h.Catalog() != before {
			t.Error("the catalog changed although its rebuild panicked")
		}
		// The next change rebuilds; its collision is logged, no panic.
		fx.AddTool("math", fixture.Tool{Name: "subtract", Description: "Subtract.", Schema: `{"type":"object"}`})
		// The catalog is swapped in, then each session synced to it: wait
		// for what the session lists, not for the catalog.
		waitFor(t, "a session to list the tool added after the failed rebuild", func() bool { return a.tool("subtract") != nil })
	})
	t.Run("stdio guard", func(t *testing.T) {
		s := secServeStdio(t, h)
		hook.arm("client sent a line that is not JSON")
		s.send("this is not json")
		m := s.recv()
		if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(-32603) {
			t.Fatalf("a bad line whose handling panicked: %v, want -32603", m)
		}
		s.send(fixture.RawInitialize)
		if m := s.recv(); m["result"] == nil {
			t.Errorf("initialize after the panic: %v", m)
		}
	})
	logs := lg.String()
	if got := panics(); got != 4 {
		t.Errorf("%d panics logged, want 4 (once each)", got)
	}
	if !strings.Contains(logs, "stack=") || !strings.Contains(logs, "hardening_test.go") {
		t.Error("the panics' stacks are not logged")
	}
}

// TestResultLimitThroughHub: a tool result over max_result_bytes, over
// stdio and over HTTP, is an isError for that call naming the limit and
// its config key; the server stays connected and the next call works.
func TestResultLimitThroughHub(t *testing.T) {
	web := &config.Server{Upstream: config.Upstream{Name: "web", URL: fixture.StartHTTP(t, "-name", "web", "-hostile")}}
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "local", "-hostile"), web)
	cfg.MaxResultBytes = 1 << 20
	h, _ := secHub(t, cfg)
	c := connectClient(t, h, "")
	for _, server := range []string{"local", "web"} {
		res := c.call(server+"__big", map[string]any{"bytes": 2 << 20})
		if text := fixture.ResultText(res); !res.IsError || !strings.Contains(text, "max_result_bytes (1048576 bytes)") || !strings.Contains(text, "'"+server+"'") {
			t.Errorf("%s: a 2 MiB result: isError=%v %.200q", server, res.IsError, text)
		}
		if res := c.call(server+"__big", map[string]any{"bytes": 10}); res.IsError || fixture.ResultText(res) != "xxxxxxxxxx" {
			t.Errorf("%s: the next call: %+v", server, res)
		}
	}
	for _, st := range h.Upstreams() {
		if st.State != upstream.StateReady || st.Restarts != 0 {
			t.Errorf("%s: %+v, want ready and never restarted", st.Name, st)
		}
	}
}

// hdCPU is the process's user+system CPU time.
func hdCPU(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestListChangedStormHub: an upstream that sends 1,000 tools/list_changed
// at once costs the hub a couple of re-lists and catalog rebuilds, and
// little CPU.
func TestListChangedStormHub(t *testing.T) {
	cfg := fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-hostile"))
	h, _ := secHub(t, cfg)
	c := connectClient(t, h, "")
	c.call("fx__big", map[string]any{"bytes": 1})
	rebuilds := h.changes.Load()
	cpu := hdCPU(t)
	begin := time.Now()
	c.call("fx__storm", map[string]any{"n": 1000})
	var arrived time.Duration
	waitFor(t, "the storm handled", func() bool {
		st := h.Upstreams()[0]
		if st.ListChanges == 1000 && arrived == 0 {
			arrived = time.Since(begin)
		}
		return st.ListChanges == 1000 && !st.Relisting
	})
	used := hdCPU(t) - cpu
	st := h.Upstreams()[0]
	n := h.changes.Load() - rebuilds
	// A couple; on a machine so loaded that the notifications take long to
	// arrive, one more per RelistInterval they took.
	most := max(4, 2+int64(arrived/upstream.RelistInterval))
	t.Logf("1000 list_changed in %v: %d re-lists, %d catalog rebuilds (at most %d), %v CPU", arrived, st.Relists, n, most, used)
	if st.Relists > most || n > most {
		t.Errorf("%d re-lists and %d rebuilds for 1000 notifications, want at most %d", st.Relists, n, most)
	}
	// Without coalescing this costs seconds (1,000 re-lists and rebuilds).
	if used > 2*time.Second {
		t.Errorf("the storm cost %v of CPU", used)
	}
	if res := c.call("fx__big", map[string]any{"bytes": 3}); res.IsError {
		t.Errorf("a call after the storm: %+v", res)
	}
}
