package hub

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestDiffServers: a reload starts, stops, reconnects, re-exposes or
// leaves alone each server by comparing its whole entry.
func TestDiffServers(t *testing.T) {
	const base = "servers:\n  a:\n    command: fa\n    args: [x]\n  b:\n    url: http://127.0.0.1:1/mcp\n  c:\n    builtin: time\n"
	tests := []struct {
		name string
		next string
		want serverDiff
	}{
		{"same file", base, serverDiff{Unchanged: []string{"a", "b", "c"}}},
		{"reordered and reformatted", "servers:\n  c: {builtin: time}\n  b: {url: 'http://127.0.0.1:1/mcp'}\n  a: {command: fa, args: [x]}\n",
			serverDiff{Unchanged: []string{"c", "b", "a"}}},
		{"added", base + "  d:\n    command: fd\n", serverDiff{Added: []string{"d"}, Unchanged: []string{"a", "b", "c"}}},
		{"removed", "servers:\n  a:\n    command: fa\n    args: [x]\n", serverDiff{Removed: []string{"b", "c"}, Unchanged: []string{"a"}}},
		{"args changed", strings.Replace(base, "[x]", "[y]", 1), serverDiff{Changed: []string{"a"}, Unchanged: []string{"b", "c"}}},
		{"env added", strings.Replace(base, "args: [x]", "args: [x]\n    env: {K: v}", 1), serverDiff{Changed: []string{"a"}, Unchanged: []string{"b", "c"}}},
		{"url changed", strings.Replace(base, ":1/mcp", ":2/mcp", 1), serverDiff{Changed: []string{"b"}, Unchanged: []string{"a", "c"}}},
		{"headers added", strings.Replace(base, ":1/mcp", ":1/mcp\n    headers: {X: y}", 1), serverDiff{Changed: []string{"b"}, Unchanged: []string{"a", "c"}}},
		{"disabled", strings.Replace(base, "builtin: time", "builtin: time\n    disabled: true", 1), serverDiff{Changed: []string{"c"}, Unchanged: []string{"a", "b"}}},
		{"timeout", strings.Replace(base, "builtin: time", "builtin: time\n    timeout: 5s", 1), serverDiff{Changed: []string{"c"}, Unchanged: []string{"a", "b"}}},
		{"prefix only", strings.Replace(base, "builtin: time", "builtin: time\n    prefix: t", 1), serverDiff{Retuned: []string{"c"}, Unchanged: []string{"a", "b"}}},
		{"tool filter only", strings.Replace(base, "args: [x]", "args: [x]\n    tools: {deny: [rm]}", 1), serverDiff{Retuned: []string{"a"}, Unchanged: []string{"b", "c"}}},
		{"defer and description", strings.Replace(base, "builtin: time", "builtin: time\n    defer_loading: true\n    description: clocks", 1), serverDiff{Retuned: []string{"c"}, Unchanged: []string{"a", "b"}}},
		{"renamed", strings.Replace(base, "  c:", "  clock:", 1), serverDiff{Added: []string{"clock"}, Removed: []string{"c"}, Unchanged: []string{"a", "b"}}},
	}
	old, err := config.Parse("hub.yaml", []byte(base), builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			next, err := config.Parse("hub.yaml", []byte(tt.next), builtin.Names())
			if err != nil {
				t.Fatal(err)
			}
			got := diffServers(old, next)
			for _, part := range []struct {
				what      string
				got, want []string
			}{{"added", got.Added, tt.want.Added}, {"removed", got.Removed, tt.want.Removed}, {"changed", got.Changed, tt.want.Changed},
				{"retuned", got.Retuned, tt.want.Retuned}, {"unchanged", got.Unchanged, tt.want.Unchanged}} {
				if !slices.Equal(part.got, part.want) {
					t.Errorf("%s: %v, want %v", part.what, part.got, part.want)
				}
			}
		})
	}
}

// TestRestartNeeded: keys that shaped the HTTP server or the chat API at
// start are reported, not silently ignored; keys that apply live are not.
func TestRestartNeeded(t *testing.T) {
	const base = "servers:\n  a: {command: fa}\nmax_sessions: 5\n"
	tests := []struct {
		name, extra string
		want        []string
	}{
		{"nothing", "", nil},
		{"live keys", "max_sessions: 6\n", nil},
		{"auth is live", "auth: {tokens: [abcdef]}\n", nil},
		{"discovery is live", "discovery: {enabled: true}\n", nil},
		{"http limits", "http: {idle_timeout: 5s}\n", []string{"http"}},
		{"body limit and idle timeout", "max_request_bytes: 1000\nsession_idle_timeout: 1m\n", []string{"max_request_bytes", "session_idle_timeout"}},
		{"chat sections", "providers: {local: {type: openai, base_url: 'http://127.0.0.1:1/v1'}}\nchat: {max_rounds: 3}\n", []string{"providers", "chat"}},
	}
	old, err := config.Parse("hub.yaml", []byte(base), builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := base + tt.extra
			if strings.HasPrefix(tt.extra, "max_sessions") {
				text = strings.Replace(base, "max_sessions: 5\n", tt.extra, 1)
			}
			next, err := config.Parse("hub.yaml", []byte(text), builtin.Names())
			if err != nil {
				t.Fatal(err)
			}
			if got := restartNeeded(old, next); !slices.Equal(got, tt.want) {
				t.Errorf("restartNeeded = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestApply: a session keeps its loaded tools across a reload, the tools
// of a removed server leave and those of an added one arrive with
// list_changed, an unchanged server keeps its connection, and a removed or
// changed one is closed.
func TestApply(t *testing.T) {
	t.Parallel()
	fx := fixture.NewServers()
	h := newTestHub(t, fixture.SmallConfig(), fx)
	c := connectClient(t, h, "")
	if _, isErr := c.search(map[string]any{"tool_names": []string{"math__add"}}); isErr {
		t.Fatal("search_tools failed")
	}
	c.listChanged(1)
	if c.tool("math__add") == nil {
		t.Fatal("math__add not loaded")
	}
	before := h.live.Load()
	mathUp, weatherUp, clockUp := before.byName["math"], before.byName["weather"], before.byName["clock"]

	// weather removed, search added, clock reconnected (a timeout), math kept.
	next := fixture.NewConfig(config.Discovery{Enabled: true, MaxSearchResults: 5},
		fixture.ServerEntry("math", fixture.DeferLoading(true)),
		fixture.ServerEntry("clock", fixture.DeferLoading(false)),
		fixture.ServerEntry("search", fixture.DeferLoading(false)))
	next.Servers["clock"].Timeout = config.Duration(7 * time.Second)
	changes := c.toolsChanged.Load()
	if err := h.Apply(context.Background(), next); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	c.listChanged(changes + 1)

	after := h.live.Load()
	if after.byName["math"] != mathUp {
		t.Error("unchanged server math was reconnected")
	}
	if after.byName["clock"] == clockUp {
		t.Error("changed server clock was not reconnected")
	}
	for name, u := range map[string]*upstream.Upstream{"weather (removed)": weatherUp, "clock (changed, old)": clockUp} {
		if st := u.Status().State; st != upstream.StateClosed {
			t.Errorf("%s: state %s, want closed", name, st)
		}
	}
	names := c.toolNames()
	if !slices.Contains(names, "math__add") {
		t.Errorf("loaded tool math__add left on reload: %v", names)
	}
	if slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "weather__") }) {
		t.Errorf("removed server's tools still listed: %v", names)
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "search__") }) {
		t.Errorf("added server's tools not listed: %v", names)
	}
	if !slices.Contains(names, "clock__now") {
		t.Errorf("changed server's tools not listed after reconnect: %v", names)
	}
	if res := c.call("math__add", map[string]any{"a": 1, "b": 2}); res.IsError {
		t.Errorf("call to an unchanged server after reload failed: %v", fixture.ResultText(res))
	}
	st := h.ConfigStatus()
	if st.Reloads != 1 || st.LastReloadError != "" {
		t.Errorf("ConfigStatus = %+v, want 1 reload and no error", st)
	}

	// Removing the server of a loaded tool takes the tool away.
	changes = c.toolsChanged.Load()
	last := fixture.NewConfig(config.Discovery{Enabled: true, MaxSearchResults: 5}, fixture.ServerEntry("clock", fixture.DeferLoading(false)))
	last.Servers["clock"].Timeout = config.Duration(7 * time.Second)
	if err := h.Apply(context.Background(), last); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	c.listChanged(changes + 1)
	if names := c.toolNames(); !slices.Equal(names, []string{"clock__now"}) {
		t.Errorf("after removing math and search: %v, want [clock__now]", names)
	}
	if after.byName["clock"] != h.live.Load().byName["clock"] {
		t.Error("unchanged server clock was reconnected")
	}
}

// TestApplyToolsetAndDiscovery: a session of a toolset sees the toolset's
// new definition, and turning discovery off lists deferred tools, without
// a new session.
func TestApplyToolsetAndDiscovery(t *testing.T) {
	fx := fixture.NewServers()
	cfg := fixture.SmallConfig()
	cfg.Toolsets = map[string]*config.Toolset{"calc": {Servers: map[string]*config.ToolSelection{"math": {All: true}}}}
	h := newTestHub(t, cfg, fx)
	c := connectClient(t, h, "calc")
	if names := c.toolNames(); slices.Contains(names, "clock__now") {
		t.Fatalf("toolset calc lists clock__now: %v", names)
	}
	next := fixture.SmallConfig()
	next.Discovery.Enabled = false
	next.Toolsets = map[string]*config.Toolset{"calc": {Servers: map[string]*config.ToolSelection{"math": {All: true}, "clock": {All: true}}}}
	changes := c.toolsChanged.Load()
	if err := h.Apply(context.Background(), next); err != nil {
		t.Fatal(err)
	}
	c.listChanged(changes + 1)
	want := []string{"clock__now", "math__add", "math__multiply"}
	if names := c.toolNames(); !slices.Equal(names, want) {
		t.Errorf("after reload: %v, want %v", names, want)
	}
}

// TestApplyAfterClose: a closed hub refuses a reload and starts nothing.
func TestApplyAfterClose(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	h.Close()
	if err := h.Apply(context.Background(), fixture.WideConfig()); err == nil {
		t.Fatal("Apply on a closed hub succeeded")
	}
	if _, ok := h.live.Load().byName["search"]; ok {
		t.Error("a closed hub started a server")
	}
}
