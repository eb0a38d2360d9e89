package hub

// Tests of how the hub reads its config (config.Parse): the discovery and toolsets sections
// and the defer_loading rule.

import (
	"fmt"
	"slices"
	"testing"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func TestParseConfigDiscoveryAndToolsets(t *testing.T) {
	yaml := `
servers:
  weather: {command: echo, defer_loading: true}
  math: {command: echo}
  clock: {command: echo, defer_loading: false}
discovery:
  enabled: true
  defer_all: true
  max_search_results: 3
  call_tool: false
  auto_load_on_call: true
toolsets:
  mixed:
    description: Everything but add.
    servers:
      weather: true
      math: {exclude: [add]}
      clock: false
  only:
    servers:
      math: [add, multiply]
  none:
    servers: {}
`
	cfg, err := config.Parse("hub.yaml", []byte(yaml), builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	d := cfg.Discovery
	if !d.Enabled || !d.DeferAll || d.SearchLimit() != 3 || d.CallToolEnabled() || !d.AutoLoadOnCall {
		t.Errorf("discovery = %+v", d)
	}
	if !slices.Equal(cfg.ServerOrder, []string{"weather", "math", "clock"}) {
		t.Errorf("server order = %v", cfg.ServerOrder)
	}
	for server, want := range map[string]bool{"weather": true, "math": true, "clock": false} {
		if got := cfg.Deferred(server); got != want {
			t.Errorf("Deferred(%s) = %v, want %v", server, got, want)
		}
	}
	mixed := cfg.Toolsets["mixed"]
	if mixed.Description != "Everything but add." {
		t.Errorf("description = %q", mixed.Description)
	}
	check := func(ts *config.Toolset, server, tool string, want bool) {
		t.Helper()
		if got := allows(ts, &Tool{Server: server, Original: tool}); got != want {
			t.Errorf("allows(%s, %s) = %v, want %v", server, tool, got, want)
		}
	}
	check(mixed, "weather", "get_forecast", true)
	check(mixed, "math", "add", false)
	check(mixed, "math", "multiply", true)
	check(mixed, "clock", "now", false)
	check(cfg.Toolsets["only"], "math", "add", true)
	check(cfg.Toolsets["only"], "math", "divide", false)
	check(cfg.Toolsets["only"], "weather", "get_forecast", false)
	check(cfg.Toolsets["none"], "math", "add", false)
	var nilToolset *config.Toolset
	check(nilToolset, "math", "add", true)

	// Defaults.
	cfg, err = config.Parse("hub.yaml", []byte("servers:\n  math: {command: echo, defer_loading: true}\n"), builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Discovery; d.Enabled || d.SearchLimit() != 5 || !d.CallToolEnabled() || d.AutoLoadOnCall || cfg.Deferred("math") {
		t.Errorf("defaults: %+v, Deferred(math) = %v", d, cfg.Deferred("math"))
	}

	// Bad toolset entries.
	for _, entry := range []string{"3", "{include: [add]}", "{exclude: [add], other: 1}", "\"maybe\""} {
		_, err := config.Parse("hub.yaml", []byte("servers:\n  math: {command: echo}\ntoolsets:\n  t:\n    servers:\n      math: "+entry+"\n"), builtin.Names())
		if err == nil {
			t.Errorf("toolset entry %s accepted", entry)
		}
	}
}

func TestDeferLoadingPrecedence(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		enabled, deferAll bool
		deferLoading      *bool
		want              bool
	}{
		{false, false, &yes, false}, // discovery off: ignored
		{false, true, nil, false},
		{true, false, nil, false},
		{true, false, &yes, true},
		{true, true, nil, true},
		{true, true, &no, false}, // per-server wins over defer_all
		{true, false, &no, false},
	} {
		sc := fixture.ServerEntry("s")
		sc.DeferLoading = tc.deferLoading
		cfg := fixture.NewConfig(config.Discovery{Enabled: tc.enabled, DeferAll: tc.deferAll}, sc)
		if got := cfg.Deferred("s"); got != tc.want {
			dl := "unset"
			if tc.deferLoading != nil {
				dl = fmt.Sprint(*tc.deferLoading)
			}
			t.Errorf("enabled %v, defer_all %v, defer_loading %s: Deferred = %v, want %v", tc.enabled, tc.deferAll, dl, got, tc.want)
		}
	}
}
