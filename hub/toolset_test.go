package hub

// Tests of toolset.go: toolsets select and validate what a session sees
// (items K1 to K4 of docs/search-tools.md).

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func toolsetConfig(sets map[string]*config.Toolset) *config.Config {
	cfg := fixture.SmallConfig()
	cfg.Toolsets = sets
	return cfg
}

func TestSpecK1ServerToolset(t *testing.T) {
	fx := fixture.NewServers()
	h := newTestHub(t, toolsetConfig(map[string]*config.Toolset{
		"wx": {Servers: map[string]*config.ToolSelection{"weather": {All: true}}},
	}), fx)
	c := connectClient(t, h, "wx")
	if got := c.toolNames(); !slices.Equal(got, fixture.Sorted(SearchToolsName, CallToolName)) {
		t.Errorf("tools = %v: weather is still deferred, clock is outside the toolset", got)
	}
	d := searchDescription(t, c)
	if !strings.Contains(d, "- weather (2 tools)") || strings.Contains(d, "math") {
		t.Errorf("manifest:\n%s", d)
	}
	text, _ := c.search(map[string]any{"query": "add multiply numbers weather"})
	for _, s := range foundServers(text) {
		if s != "weather" {
			t.Errorf("found a %s tool:\n%s", s, text)
		}
	}
	if text, _ := c.search(map[string]any{"server_name": "math"}); text != "Error: Unknown server 'math'. Valid servers: weather." {
		t.Errorf("server_name math: %q", text)
	}
	if _, err := c.callErr("clock__now", map[string]any{}); err == nil {
		t.Error("clock__now callable outside the toolset")
	}
	if n := len(fx.CallsTo("clock", "")); n != 0 {
		t.Errorf("clock called %d times", n)
	}
	// The whole catalog is still there for a session without a toolset.
	if got := connectClient(t, h, "").toolNames(); !slices.Contains(got, "clock__now") {
		t.Errorf("default session: %v", got)
	}
}

func TestSpecK2ToolsetShapes(t *testing.T) {
	sets := map[string]*config.Toolset{
		"include": {Servers: map[string]*config.ToolSelection{"math": {Include: []string{"add"}}}},
		"exclude": {Servers: map[string]*config.ToolSelection{"math": {All: true, Exclude: []string{"add"}}}},
		"empty":   {Servers: map[string]*config.ToolSelection{}},
		"false":   {Servers: map[string]*config.ToolSelection{"math": {All: false}, "clock": {All: true}}},
		"eager":   {Servers: map[string]*config.ToolSelection{"clock": {Include: []string{"now"}}, "weather": {Include: []string{}}}},
	}
	h := newTestHub(t, toolsetConfig(sets), fixture.NewServers())
	cases := []struct {
		toolset  string
		listed   []string
		loadable []string // what server_name / a broad search can load
	}{
		{"include", []string{CallToolName, SearchToolsName}, []string{"math__add"}},
		{"exclude", []string{CallToolName, SearchToolsName}, []string{"math__multiply"}},
		{"empty", nil, nil},
		{"false", []string{"clock__now"}, nil},
		{"eager", []string{"clock__now"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.toolset, func(t *testing.T) {
			c := connectClient(t, h, tc.toolset)
			if got := c.toolNames(); !slices.Equal(got, fixture.Sorted(tc.listed...)) {
				t.Errorf("tools = %v, want %v", got, tc.listed)
			}
			if tc.loadable == nil {
				return
			}
			text, _ := c.search(map[string]any{"query": "add multiply two numbers together"})
			if got := foundNames(text); !slices.Equal(got, tc.loadable) {
				t.Errorf("found %v, want %v", got, tc.loadable)
			}
		})
	}
}

func TestSpecK3ToolsetValidation(t *testing.T) {
	cfg := toolsetConfig(map[string]*config.Toolset{
		"bad": {Servers: map[string]*config.ToolSelection{
			"x":       {All: true},
			"math":    {Include: []string{"add", "nope"}},
			"weather": {All: true, Exclude: []string{"bogus"}},
		}},
		"good": {Servers: map[string]*config.ToolSelection{"math": {Include: []string{"add"}}}},
		"also": {Servers: map[string]*config.ToolSelection{"clock": {Include: []string{"later"}}}},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := New(ctx, cfg, Options{Logger: quietLogger, Builtin: fixture.NewServers().Builtin, StartupWait: 20 * time.Second})
	if err == nil {
		h.Close()
		t.Fatal("New accepted invalid toolsets")
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Errorf("error %T, want *ConfigError", err)
	}
	for _, want := range []string{
		"Server 'x' not found in configuration",
		"Tool 'nope' not found in server 'math'. Available: add, multiply",
		"Tool 'bogus' not found in server 'weather' (specified in exclude list). Available: get_current, get_forecast",
		"Tool 'later' not found in server 'clock'. Available: now",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "'add' not found") {
		t.Errorf("a valid tool is reported:\n%v", err)
	}

	// The unknown server is also caught when the file is parsed.
	_, err = config.Parse("hub.yaml", []byte("servers:\n  math: {command: echo}\ntoolsets:\n  t:\n    servers:\n      x: true\n"), builtin.Names())
	if err == nil || !strings.Contains(err.Error(), "Server 'x' not found in configuration") {
		t.Errorf("ParseConfig: %v", err)
	}
}

func TestSpecK4ExcludedNeverFound(t *testing.T) {
	fx := fixture.NewServers()
	h := newTestHub(t, toolsetConfig(map[string]*config.Toolset{
		"noadd": {Servers: map[string]*config.ToolSelection{"math": {All: true, Exclude: []string{"add"}}, "clock": {All: true}}},
	}), fx)
	c := connectClient(t, h, "noadd")
	for _, args := range []map[string]any{
		{"query": "add two numbers together"},
		{"query": "add", "server_name": "math"},
		{"server_name": "math"},
		{"tool_names": []string{"math__add"}},
	} {
		text, _ := c.search(args)
		if strings.Contains(text, "[math] math__add") || strings.Contains(text, "Did you mean: math__add") {
			t.Errorf("search_tools(%v) shows the excluded tool:\n%s", args, text)
		}
	}
	if text, _ := c.search(map[string]any{"tool_names": []string{"math__add"}}); text != "No tools found. Not found: math__add." {
		t.Errorf("tool_names: %q", text)
	}
	if _, err := c.callErr("math__add", map[string]any{"a": 1, "b": 2}); err == nil || !strings.Contains(err.Error(), "Unknown tool 'math__add'") {
		t.Errorf("direct call: %v", err)
	}
	res := c.call(CallToolName, map[string]any{"name": "math__add", "arguments": map[string]any{"a": 1, "b": 2}})
	if !res.IsError || !strings.HasPrefix(fixture.ResultText(res), "Error: Unknown tool 'math__add'.") {
		t.Errorf("call_tool: %q", fixture.ResultText(res))
	}
	if strings.Contains(searchDescription(t, c), "math__add") {
		t.Error("the manifest names the excluded tool")
	}
	if n := len(fx.CallsTo("math", "add")); n != 0 {
		t.Errorf("math.add called %d times", n)
	}
}

// K1, K2 from a hub.yaml: the YAML shapes true / false / [list] /
// {exclude: [...]} / {} drive the sessions' tool lists.
func TestSpecK2ToolsetsFromYAML(t *testing.T) {
	fx := fixture.NewServers()
	// ParseConfig accepts only real builtin names; the fixtures stand in for them.
	fx.Define("calc", fixture.MathTools()...)
	fx.Define("time", fixture.ClockTools()...)
	fx.Define("text", fixture.WeatherTools()...)
	cfg, err := config.Parse("hub.yaml", []byte(`
servers:
  weather: {builtin: text, defer_loading: true}
  math: {builtin: calc, defer_loading: true}
  clock: {builtin: time}
discovery:
  enabled: true
toolsets:
  wx:     {servers: {weather: true, clock: false}}
  add:    {servers: {math: [add], clock: true}}
  noadd:  {servers: {math: {exclude: [add]}}}
  none:   {servers: {}}
  nomath: {servers: {math: [], clock: [now]}}
`), builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	h := newTestHub(t, cfg, fx)
	meta := []string{CallToolName, SearchToolsName}
	for _, tc := range []struct {
		toolset  string
		listed   []string
		loadable []string // what server_name loads
		server   string
	}{
		{"", append([]string{"clock__now"}, meta...), []string{"math__add", "math__multiply"}, "math"},
		{"wx", meta, []string{"weather__get_current", "weather__get_forecast"}, "weather"},
		{"add", append([]string{"clock__now"}, meta...), []string{"math__add"}, "math"},
		{"noadd", meta, []string{"math__multiply"}, "math"},
		{"none", nil, nil, ""},
		{"nomath", []string{"clock__now"}, nil, ""},
	} {
		t.Run("toolset "+tc.toolset, func(t *testing.T) {
			c := connectClient(t, h, tc.toolset)
			if got := c.toolNames(); !slices.Equal(got, fixture.Sorted(tc.listed...)) {
				t.Errorf("tools = %v, want %v", got, fixture.Sorted(tc.listed...))
			}
			if tc.server == "" {
				return
			}
			text, _ := c.search(map[string]any{"server_name": tc.server})
			if got := fixture.Sorted(foundNames(text)...); !slices.Equal(got, tc.loadable) {
				t.Errorf("server_name %s loads %v, want %v", tc.server, got, tc.loadable)
			}
		})
	}
	if _, err := h.NewSession(SessionOptions{Toolset: "nope"}); err == nil || !strings.Contains(err.Error(), "toolset 'nope' not found") {
		t.Errorf("unknown toolset: %v", err)
	}
}
