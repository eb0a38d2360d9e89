package hub

// Tests of metatools.go: search_tools and call_tool, the manifest and the
// instructions. One test per item of docs/search-tools.md (D*, X*, S1 end
// to end, C3), named by its spec id; then the manifest past its budget and
// the schemas search results show. Fixtures are in helpers_test.go.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// The SMALL manifest (spec D2): servers sorted, names sorted, summaries
// from the first sentences of the tool descriptions.
const smallManifest = "- math (2 tools): math__add, math__multiply\n" +
	"  Add two numbers together. Multiply two numbers together.\n" +
	"- weather (2 tools): weather__get_current, weather__get_forecast\n" +
	"  Get current weather conditions. Get weather forecast for a location."

func TestSpecD1SearchToolsDefinition(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	st := c.tool(SearchToolsName)
	if st == nil {
		t.Fatal("search_tools is not listed")
	}
	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type  string `json:"type"`
			Items *struct {
				Type string `json:"type"`
			} `json:"items"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	b, _ := json.Marshal(st.InputSchema)
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || len(schema.Required) != 0 || len(schema.Properties) != 4 {
		t.Fatalf("schema = %s; want an object with query, queries, server_name, tool_names and nothing required", b)
	}
	for name, want := range map[string]string{"query": "string", "queries": "array", "server_name": "string", "tool_names": "array"} {
		if got := schema.Properties[name].Type; got != want {
			t.Errorf("%s: type %q, want %q", name, got, want)
		}
	}
	for _, name := range []string{"queries", "tool_names"} {
		if it := schema.Properties[name].Items; it == nil || it.Type != "string" {
			t.Errorf("%s items = %+v, want string", name, it)
		}
	}
	// _meta["anthropic/alwaysLoad"] on the eager tool and the meta-tools.
	for _, name := range []string{SearchToolsName, CallToolName, "clock__now"} {
		tl := c.tool(name)
		if tl == nil {
			t.Fatalf("%s not listed", name)
		}
		if tl.Meta[alwaysLoadKey] != true {
			t.Errorf("%s _meta = %v, want %s: true", name, tl.Meta, alwaysLoadKey)
		}
	}
	if !h.Catalog().byName["math__add"].Deferred {
		t.Error("math__add should be deferred")
	}
	caps := c.cs.InitializeResult().Capabilities
	if caps.Tools == nil || !caps.Tools.ListChanged {
		t.Errorf("capabilities.tools = %+v, want listChanged true", caps.Tools)
	}
}

func TestSpecD2Manifest(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	desc := searchDescription(t, c)
	if !strings.Contains(desc, smallManifest) {
		t.Errorf("search_tools description lacks the manifest\n%s\nwant it to contain\n%s", desc, smallManifest)
	}
	if strings.Contains(desc, "clock") {
		t.Errorf("eager server clock is in the manifest:\n%s", desc)
	}
	if !strings.Contains(desc, "search") || !strings.Contains(desc, "load") {
		t.Errorf("description does not say what the tool is for:\n%s", desc)
	}
}

func TestSpecD2ManifestBig(t *testing.T) {
	h := newTestHub(t, fixture.BigConfig(5), fixture.NewServers())
	c := connectClient(t, h, "")
	desc := searchDescription(t, c)
	want := "- bigserver (12 tools): bigserver__tool_0, bigserver__tool_1, bigserver__tool_2, bigserver__tool_3, ... and 8 more\n"
	if !strings.Contains(desc, want) {
		t.Fatalf("manifest:\n%s\nwant line %q", desc, want)
	}
	if strings.Contains(desc, "tool_4") {
		t.Errorf("manifest names tool_4:\n%s", desc)
	}
	summary := strings.SplitN(strings.SplitN(desc, want, 2)[1], "\n", 2)[0]
	if !strings.HasPrefix(summary, "  Tool number 0 on big server.") {
		t.Errorf("summary line %q should be indented and start with the first description", summary)
	}
	summary = strings.TrimPrefix(summary, "  ")
	if len(summary) > 80 || !strings.HasSuffix(summary, "...") {
		t.Errorf("summary %q (%d chars): want at most 80 characters ending in ...", summary, len(summary))
	}
}

// A server lists all its names up to ten tools, four and "... and N more" past ten.
func TestSpecD2ManifestTenAndEleven(t *testing.T) {
	for _, n := range []int{10, 11} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			fx := fixture.NewServers()
			fx.Define("bigserver", fixture.BigTools(n)...)
			h := newTestHub(t, fixture.BigConfig(5), fx)
			desc := searchDescription(t, connectClient(t, h, ""))
			var want string
			if n == 10 {
				want = "- bigserver (10 tools): bigserver__tool_0, bigserver__tool_1, bigserver__tool_2, bigserver__tool_3, bigserver__tool_4, " +
					"bigserver__tool_5, bigserver__tool_6, bigserver__tool_7, bigserver__tool_8, bigserver__tool_9\n"
			} else {
				want = "- bigserver (11 tools): bigserver__tool_0, bigserver__tool_1, bigserver__tool_2, bigserver__tool_3, ... and 7 more\n"
			}
			if !strings.Contains(desc, want) {
				t.Errorf("manifest:\n%s\nwant line %q", desc, want)
			}
		})
	}
}

func TestSpecD2ManifestOneTool(t *testing.T) {
	cfg := fixture.SmallConfig()
	cfg.Toolsets = map[string]*config.Toolset{"one": {Servers: map[string]*config.ToolSelection{"math": {Include: []string{"add"}}}}}
	h := newTestHub(t, cfg, fixture.NewServers())
	desc := searchDescription(t, connectClient(t, h, "one"))
	want := "- math (1 tool): math__add\n  Add two numbers together."
	if !strings.HasSuffix(desc, want) {
		t.Errorf("manifest:\n%s\nwant it to end with\n%s", desc, want)
	}
	if strings.Contains(desc, "1 tools") || strings.Contains(desc, "weather") {
		t.Errorf("manifest says '1 tools' or lists a server outside the toolset:\n%s", desc)
	}
}

// A configured server description is the summary, cut to 80 characters.
func TestSpecD2ManifestSummaryCut(t *testing.T) {
	long := "Arithmetic on numbers of any size, with addition, multiplication and many other operations besides."
	cfg := fixture.NewConfig(config.Discovery{Enabled: true}, fixture.ServerEntry("math", fixture.DeferLoading(true), fixture.WithDescription(long)))
	h := newTestHub(t, cfg, fixture.NewServers())
	desc := searchDescription(t, connectClient(t, h, ""))
	lines := strings.Split(desc, "\n")
	i := slices.Index(lines, "- math (2 tools): math__add, math__multiply")
	if i < 0 || i+1 >= len(lines) {
		t.Fatalf("no math entry in\n%s", desc)
	}
	sum := strings.TrimPrefix(lines[i+1], "  ")
	if len(sum) > 80 || !strings.HasSuffix(sum, "...") || !strings.HasPrefix(long, strings.TrimSuffix(sum, "...")) {
		t.Errorf("summary %q (%d chars): want the description cut to at most 80 characters ending in ...", sum, len(sum))
	}
}

func TestSpecD3Instructions(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	ins := c.cs.InitializeResult().Instructions
	if !strings.Contains(ins, smallManifest) {
		t.Errorf("instructions lack the manifest:\n%s", ins)
	}
	for _, word := range []string{"search_tools", "call_tool", "query", "queries", "server_name", "tool_names"} {
		if !strings.Contains(ins, word) {
			t.Errorf("instructions do not mention %s:\n%s", word, ins)
		}
	}
}

func TestSpecD4NoDeferredNoMetaTools(t *testing.T) {
	t.Run("all eager", func(t *testing.T) {
		cfg := fixture.NewConfig(config.Discovery{Enabled: true},
			fixture.ServerEntry("math", fixture.DeferLoading(false)), fixture.ServerEntry("clock"))
		h := newTestHub(t, cfg, fixture.NewServers())
		c := connectClient(t, h, "")
		if got, want := c.toolNames(), fixture.Sorted("math__add", "math__multiply", "clock__now"); !slices.Equal(got, want) {
			t.Errorf("tools = %v, want %v", got, want)
		}
		if ins := c.cs.InitializeResult().Instructions; ins != "" {
			t.Errorf("instructions = %q, want none without deferred tools", ins)
		}
	})
	t.Run("toolset without deferred", func(t *testing.T) {
		cfg := fixture.SmallConfig()
		cfg.Toolsets = map[string]*config.Toolset{"time": {Servers: map[string]*config.ToolSelection{"clock": {All: true}}}}
		h := newTestHub(t, cfg, fixture.NewServers())
		c := connectClient(t, h, "time")
		if got, want := c.toolNames(), []string{"clock__now"}; !slices.Equal(got, want) {
			t.Errorf("tools = %v, want %v", got, want)
		}
		res, err := c.callErr(SearchToolsName, map[string]any{"query": "weather"})
		if err == nil && !res.IsError {
			t.Errorf("search_tools answered in a session without deferred tools: %s", fixture.ResultText(res))
		}
	})
}

func TestSpecX1NoArguments(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	before := c.toolNames()
	for _, args := range []map[string]any{
		{}, nil, {"query": ""}, {"query": "   "}, {"tool_names": []string{}}, {"query": " \t", "tool_names": []string{}},
	} {
		text, isErr := c.search(args)
		if text != errNoArgs || !isErr {
			t.Errorf("search_tools(%v) = %q (isError %v), want %q", args, text, isErr, errNoArgs)
		}
	}
	c.unchanged(t, before)
}

func TestSpecX2UnknownServer(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	before := c.toolNames()
	for _, args := range []map[string]any{
		{"server_name": "nope"},
		{"server_name": ""},
		{"server_name": "clock"}, // eager only
		{"server_name": "clock", "query": "time"},
		{"server_name": "Math"},
		{"server_name": "nope", "tool_names": []string{"math__add"}},
	} {
		want := fmt.Sprintf("Error: Unknown server '%s'. Valid servers: math, weather.", args["server_name"])
		text, isErr := c.search(args)
		if text != want || !isErr {
			t.Errorf("search_tools(%v) = %q (isError %v), want %q", args, text, isErr, want)
		}
	}
	c.unchanged(t, before)
}

func TestSpecX3Precedence(t *testing.T) {
	cases := []struct {
		name string
		cfg  func() *config.Config
		args map[string]any
		want []string // found, in order; nil: check with fn
		fn   func(t *testing.T, found []string, text string)
	}{
		{name: "tool_names wins over query", cfg: fixture.SmallConfig,
			args: map[string]any{"tool_names": []string{"math__multiply"}, "query": "weather forecast"},
			want: []string{"math__multiply"}},
		{name: "server_name keeps only its tool_names", cfg: fixture.SmallConfig,
			args: map[string]any{"server_name": "math", "tool_names": []string{"weather__get_forecast", "math__add"}},
			want: []string{"math__add"},
			fn: func(t *testing.T, _ []string, text string) {
				if !strings.Contains(text, "Not found: weather__get_forecast.") {
					t.Errorf("the other server's tool is not reported as not found:\n%s", text)
				}
			}},
		{name: "server_name with query searches inside it", cfg: fixture.WideConfig,
			args: map[string]any{"server_name": "weather", "query": "current weather conditions brave numbers"},
			fn: func(t *testing.T, found []string, text string) {
				if len(found) == 0 || found[0] != "weather__get_current" {
					t.Errorf("found %v, want weather__get_current first", found)
				}
				for _, s := range foundServers(text) {
					if s != "weather" {
						t.Errorf("found a %s tool in a search inside weather:\n%s", s, text)
					}
				}
			}},
		{name: "server_name alone loads the server in catalog order", cfg: fixture.WideConfig,
			args: map[string]any{"server_name": "weather"},
			want: []string{"weather__get_current", "weather__get_forecast"}},
		{name: "query alone returns the top max_search_results", cfg: func() *config.Config {
			cfg := fixture.WideConfig()
			cfg.Discovery.MaxSearchResults = 2
			return cfg
		}, args: map[string]any{"query": "weather forecast current search web brave numbers"},
			fn: func(t *testing.T, found []string, _ string) {
				if len(found) != 2 {
					t.Errorf("found %v, want exactly max_search_results (2)", found)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fx := fixture.NewServers()
			h := newTestHub(t, tc.cfg(), fx)
			c := connectClient(t, h, "")
			text, isErr := c.search(tc.args)
			if isErr {
				t.Fatalf("error: %s", text)
			}
			found := foundNames(text)
			if tc.want != nil && !slices.Equal(found, tc.want) {
				t.Errorf("found %v, want %v\n%s", found, tc.want, text)
			}
			if tc.fn != nil {
				tc.fn(t, found, text)
			}
			// Exactly the found tools were loaded.
			for _, name := range found {
				if c.tool(name) == nil {
					t.Errorf("%s was found but not loaded", name)
				}
			}
			if got := len(c.tools()); got != 3+len(found) {
				t.Errorf("%d tools listed, want 3 + %d found", got, len(found))
			}
		})
	}
	// server_name alone is catalog order (the upstream's order), also for BIG.
	t.Run("catalog order BIG", func(t *testing.T) {
		h := newTestHub(t, fixture.BigConfig(3), fixture.NewServers())
		c := connectClient(t, h, "")
		text, _ := c.search(map[string]any{"server_name": "bigserver"})
		var want []string
		for _, tl := range h.Catalog().Tools {
			want = append(want, tl.Name)
		}
		if got := foundNames(text); !slices.Equal(got, want) || len(got) != 12 {
			t.Errorf("found %v, want all 12 in catalog order %v", got, want)
		}
	})
}

func TestSpecX4NotFound(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	text, isErr := c.search(map[string]any{"tool_names": []string{"math__add", "nope"}})
	if isErr || !slices.Equal(foundNames(text), []string{"math__add"}) {
		t.Fatalf("result (isError %v):\n%s", isErr, text)
	}
	if c.tool("math__add") == nil {
		t.Error("math__add not loaded")
	}
	// X5 puts "Not found" after the tool blocks and before the schemas.
	if !strings.Contains(text, "\nNot found: nope.\n") {
		t.Errorf("no line 'Not found: nope.' (without suggestions) in\n%s", text)
	}
	text, _ = c.search(map[string]any{"tool_names": []string{"math__ad"}})
	if want := "No tools found. Not found: math__ad. Did you mean: math__add?"; text != want {
		t.Errorf("got %q, want %q", text, want)
	}
	text, _ = c.search(map[string]any{"tool_names": []string{"math__multiply", "math__ad"}})
	if !strings.Contains(text, "\nNot found: math__ad. Did you mean: math__add?\n") {
		t.Errorf("no suggestion line in\n%s", text)
	}
}

func TestSpecX5Layout(t *testing.T) {
	fx := fixture.NewServers()
	fx.Define("misc",
		fixture.Tool{Name: "blank", Description: "", Schema: `{"type":"object","properties":{"x":{},"y":{"type":["string","null"],"description":"  Why\n not  "}},"required":["y"]}`},
		fixture.Tool{Name: "noparams", Description: "Takes nothing.", Schema: `{"type":"object"}`})
	cfg := fixture.SmallConfig()
	cfg.Servers["misc"] = fixture.ServerEntry("misc", fixture.DeferLoading(true))
	cfg.ServerOrder = append(cfg.ServerOrder, "misc")
	h := newTestHub(t, cfg, fx)
	c := connectClient(t, h, "")

	c.search(map[string]any{"tool_names": []string{"math__multiply"}})
	text, isErr := c.search(map[string]any{"tool_names": []string{"math__add", "math__multiply", "misc__blank", "misc__noparams", "nope"}})
	if isErr {
		t.Fatal(text)
	}
	wantHead := "Found 4 tool(s):\n" +
		"\n" +
		"  math__add: Add two numbers together.\n" +
		"  Input schema: "
	if !strings.HasPrefix(text, wantHead) {
		t.Fatalf("result:\n%s\nwant it to start with:\n%s", text, wantHead)
	}
	// Each newly loaded tool: its full input schema (labels dropped), and
	// no parameter list repeating it; the tool that was already loaded:
	// the parameter list, no schema.
	for _, tc := range []struct{ name, want string }{
		{"math__add", `{"properties":{"a":{"description":"First number","type":"number"},"b":{"type":"number"}},"required":["a","b"],"type":"object"}`},
		{"misc__blank", `{"properties":{"x":{},"y":{"description":"  Why\n not  ","type":["string","null"]}},"required":["y"],"type":"object"}`},
		{"misc__noparams", `{"type":"object"}`},
	} {
		block := toolBlock(text, tc.name)
		line := strings.SplitN(strings.SplitN(block, "  Input schema: ", 2)[1:][0], "\n", 2)[0]
		var got, want any
		if err := json.Unmarshal([]byte(line), &got); err != nil {
			t.Errorf("%s schema %q: %v", tc.name, line, err)
		}
		json.Unmarshal([]byte(tc.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s schema = %s, want %s", tc.name, line, tc.want)
		}
		if strings.Contains(block, "Parameters:") {
			t.Errorf("%s: a parameter list next to the schema:\n%s", tc.name, block)
		}
	}
	if !strings.Contains(text, "\n  misc__blank: (no description)\n") {
		t.Errorf("no '(no description)' line in\n%s", text)
	}
	wantMultiply := "\n  math__multiply: Multiply two numbers together.\n" +
		"  Parameters:\n" +
		"    - a: number (required)\n" +
		"    - b: number (required)\n" +
		"\n" +
		"  misc__blank: "
	if !strings.Contains(text, wantMultiply) {
		t.Errorf("the already loaded tool's block is not\n%s\nin\n%s", wantMultiply, text)
	}
	tail := "\nAlready loaded: math__multiply\n" +
		"\n" +
		"Not found: nope.\n" +
		"\n" +
		"These tools are now loaded: "
	if !strings.Contains(text, tail) {
		t.Errorf("result lacks\n%s\nin\n%s", tail, text)
	}
	lines := strings.Split(text, "\n")
	last := lines[len(lines)-1]
	if !strings.Contains(last, "call_tool") || !strings.Contains(last, "directly") {
		t.Errorf("closing line %q should say the tools can be called directly or through call_tool", last)
	}

	// A description's indentation and blank lines go; a name that does
	// not start with its server's gets the server in brackets.
	fx.Define("pre", fixture.Tool{Name: "tool", Description: "First line.\n\n    - item one\n    - item two  ", Schema: `{"type":"object","title":"toolArguments","properties":{"title":{"type":"string","title":"Title","default":null}}}`})
	cfg2 := fixture.SmallConfig()
	cfg2.Servers["pre"] = fixture.ServerEntry("pre", fixture.DeferLoading(true), fixture.WithPrefix("p"))
	cfg2.ServerOrder = append(cfg2.ServerOrder, "pre")
	c2 := connectClient(t, newTestHub(t, cfg2, fx), "")
	text, _ = c2.search(map[string]any{"tool_names": []string{"p__tool"}})
	want := "Found 1 tool(s):\n\n  [pre] p__tool: First line.\n- item one\n- item two\n" +
		`  Input schema: {"type":"object","properties":{"title":{"type":"string"}}}` + "\n"
	if !strings.HasPrefix(text, want) {
		t.Errorf("result:\n%s\nwant it to start with:\n%s", text, want)
	}
}

// toolBlock is the block of one tool in a search_tools result: from its
// first line to the next blank line.
func toolBlock(text, name string) string {
	i := strings.Index(text, "\n  "+name+": ")
	if i < 0 {
		i = strings.Index(text, "] "+name+": ")
	}
	if i < 0 {
		return ""
	}
	block, _, _ := strings.Cut(text[i+1:], "\n\n")
	return block
}

func TestSpecX6NoResults(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	before := c.toolNames()
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"query": "zzyzx"}, "No tools found matching 'zzyzx'."},
		{map[string]any{"query": "  zzyzx "}, "No tools found matching 'zzyzx'."},
		{map[string]any{"query": "forecast", "server_name": "math"}, "No tools found matching 'forecast' in server 'math'."},
		{map[string]any{"tool_names": []string{"nope", "nada"}}, "No tools found. Not found: nope, nada."},
		{map[string]any{"tool_names": []string{"math__add"}, "server_name": "weather"}, "No tools found in server 'weather'. Not found: math__add."},
	} {
		text, isErr := c.search(tc.args)
		if text != tc.want {
			t.Errorf("search_tools(%v) = %q, want %q", tc.args, text, tc.want)
		}
		if isErr {
			t.Errorf("search_tools(%v): no results is not an error", tc.args)
		}
	}
	c.unchanged(t, before)
}

func TestSpecX7LoadTwice(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	text, _ := c.search(map[string]any{"tool_names": []string{"math__add", "math__add"}})
	if !strings.HasPrefix(text, "Found 1 tool(s):\n") || strings.Count(text, "  math__add:") != 1 || strings.Count(text, "Input schema: {") != 1 {
		t.Errorf("duplicate names: want math__add once:\n%s", text)
	}
	if n := c.listChanged(1); n != 1 {
		t.Errorf("%d list_changed after the first load, want 1", n)
	}
	text, _ = c.search(map[string]any{"tool_names": []string{"math__add", "math__multiply"}})
	if !strings.Contains(text, "\nAlready loaded: math__add\n") || strings.Contains(toolBlock(text, "math__add"), "Input schema") || !strings.Contains(toolBlock(text, "math__multiply"), "Input schema: {") {
		t.Errorf("second load: want math__add under Already loaded and only multiply's schema:\n%s", text)
	}
	if n := c.listChanged(2); n != 2 {
		t.Errorf("%d list_changed, want 2", n)
	}
	text, _ = c.search(map[string]any{"tool_names": []string{"math__add"}})
	if !strings.HasSuffix(text, "\nAlready loaded: math__add") || strings.Contains(text, "{") {
		t.Errorf("reloading: want only 'Already loaded: math__add', no schemas:\n%s", text)
	}
	if n := c.listChanged(2); n != 2 {
		t.Errorf("%d list_changed after a search that loaded nothing, want still 2", n)
	}
	if got, want := c.toolNames(), fixture.Sorted(CallToolName, "clock__now", "math__add", "math__multiply", SearchToolsName); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
}

func TestSpecX8ListChanged(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	c2 := connectClient(t, h, "") // a bystander session
	steps := []struct {
		args    map[string]any
		changed int64 // cumulative
		listed  []string
	}{
		{map[string]any{"tool_names": []string{"math__add"}}, 1, []string{"math__add"}},
		{map[string]any{"tool_names": []string{"math__add"}}, 1, []string{"math__add"}},
		{map[string]any{"query": "zzyzx"}, 1, []string{"math__add"}},
		{map[string]any{}, 1, []string{"math__add"}},
		{map[string]any{"server_name": "nope"}, 1, []string{"math__add"}},
		{map[string]any{"server_name": "weather"}, 2, []string{"math__add", "weather__get_current", "weather__get_forecast"}},
		{map[string]any{"query": "add multiply numbers"}, 3, []string{"math__add", "math__multiply", "weather__get_current", "weather__get_forecast"}},
		{map[string]any{"query": "numbers"}, 3, []string{"math__add", "math__multiply", "weather__get_current", "weather__get_forecast"}},
	}
	for i, st := range steps {
		c.search(st.args)
		if n := c.listChanged(st.changed); n != st.changed {
			t.Errorf("step %d %v: %d list_changed so far, want %d", i, st.args, n, st.changed)
		}
		want := fixture.Sorted(append([]string{"call_tool", "clock__now", "search_tools"}, st.listed...)...)
		if got := c.toolNames(); !slices.Equal(got, want) {
			t.Errorf("step %d: tools = %v, want %v", i, got, want)
		}
	}
	// Loaded tools left the deferred set: the remaining deferred tools are none.
	_, loaded, deferred := h.sessionList()[0].partition(h.Catalog())
	if len(loaded) != 4 || len(deferred) != 0 {
		t.Errorf("loaded %d, deferred %d; want 4, 0", len(loaded), len(deferred))
	}
	if n := c2.listChanged(0); n != 0 {
		t.Errorf("bystander session got %d list_changed", n)
	}
}

func TestSpecX9BigLimit(t *testing.T) {
	h := newTestHub(t, fixture.BigConfig(3), fixture.NewServers())
	c := connectClient(t, h, "")
	text, _ := c.search(map[string]any{"query": "tool number big server"})
	found := foundNames(text)
	if len(found) == 0 || len(found) > 3 || !strings.HasPrefix(text, fmt.Sprintf("Found %d tool(s):", len(found))) {
		t.Errorf("found %v, want 1..3\n%s", found, text)
	}
	if got := len(c.tools()) - 2; got != len(found) {
		t.Errorf("%d tools loaded, want %d", got, len(found))
	}
}

// X10: queries, one per step of a task, are ranked on their own and
// interleaved: max_search_results tools, one more per further step (at most
// twice as many); one query alone ranks exactly as query does.
func TestSpecX10Queries(t *testing.T) {
	wide := func(limit int) func() *config.Config {
		return func() *config.Config {
			cfg := fixture.WideConfig()
			cfg.Discovery.MaxSearchResults = limit
			return cfg
		}
	}
	cases := []struct {
		name  string
		cfg   func() *config.Config
		args  map[string]any
		want  []string // found, in order
		error string   // the error result instead
	}{
		{name: "steps interleave, one more tool per further step", cfg: wide(2),
			args: map[string]any{"queries": []string{"multiply numbers", "search web brave", "forecast"}},
			want: []string{"math__multiply", "search__brave_web_search", "weather__get_forecast", "math__add"}},
		{name: "query is the first step", cfg: wide(5),
			args: map[string]any{"query": "forecast", "queries": []string{"multiply numbers"}},
			want: []string{"weather__get_forecast", "math__multiply", "math__add"}},
		{name: "a tool two steps find is listed once", cfg: wide(2),
			args: map[string]any{"queries": []string{"multiply numbers", "multiply"}},
			want: []string{"math__multiply", "math__add"}},
		{name: "blank steps are left out", cfg: wide(2),
			args: map[string]any{"queries": []string{" ", "search web brave", ""}},
			want: []string{"search__brave_web_search", "search__brave_local_search"}},
		{name: "server_name restricts every step", cfg: wide(5),
			args: map[string]any{"server_name": "math", "queries": []string{"forecast numbers", "multiply"}},
			want: []string{"math__add", "math__multiply"}},
		{name: "only blank steps", cfg: wide(5),
			args:  map[string]any{"queries": []string{" ", ""}},
			error: "Error: Please provide at least one of: query, server_name, or tool_names."},
		{name: "more than ten queries", cfg: wide(5),
			args:  map[string]any{"query": "a", "queries": []string{"b", "c", "d", "e", "f", "g", "h", "i", "j", "k"}},
			error: "Error: search_tools takes at most 10 queries (got 11): one per step of the task."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newTestHub(t, tc.cfg(), fixture.NewServers())
			c := connectClient(t, h, "")
			before := len(c.tools())
			text, isErr := c.search(tc.args)
			if tc.error != "" {
				if !isErr || text != tc.error {
					t.Errorf("result %q (error %v), want the error %q", text, isErr, tc.error)
				}
				if n := len(c.tools()); n != before {
					t.Errorf("%d tools listed after a failed search, want %d: nothing loaded", n, before)
				}
				return
			}
			if found := foundNames(text); !slices.Equal(found, tc.want) {
				t.Errorf("found %v, want %v\n%s", found, tc.want, text)
			}
		})
	}

	// One step in queries is query, result for result.
	h := newTestHub(t, fixture.WideConfig(), fixture.NewServers())
	for _, q := range []string{"weather forecast current search web brave numbers", "multiply numbers"} {
		a, _ := connectClient(t, h, "").search(map[string]any{"query": q})
		b, _ := connectClient(t, h, "").search(map[string]any{"queries": []string{q}})
		if a != b {
			t.Errorf("%q: queries [q] answered\n%s\nquery q answered\n%s", q, b, a)
		}
	}
	text, _ := connectClient(t, h, "").search(map[string]any{"queries": []string{"zzz", "qqq"}})
	if want := "No tools found matching 'zzz', 'qqq'."; text != want {
		t.Errorf("no hits: %q, want %q", text, want)
	}
}

// S1 through search_tools: the first result of each query on WIDE.
func TestSpecS1EndToEnd(t *testing.T) {
	h := newTestHub(t, fixture.WideConfig(), fixture.NewServers())
	for query, want := range map[string]string{
		"forecast":         "weather__get_forecast",
		"search web brave": "search__brave_web_search",
		"multiply numbers": "math__multiply",
		"current weather":  "weather__get_current",
	} {
		c := connectClient(t, h, "")
		text, _ := c.search(map[string]any{"query": query})
		if found := foundNames(text); len(found) == 0 || found[0] != want {
			t.Errorf("%q: found %v, want %s first", query, found, want)
		}
		c.cs.Close()
	}
}

func TestSpecC3CallTool(t *testing.T) {
	fx := fixture.NewServers()
	h := newTestHub(t, fixture.SmallConfig(), fx)
	c := connectClient(t, h, "")

	res := c.call(CallToolName, map[string]any{"name": "weather__get_forecast", "arguments": map[string]any{"location": "Rome"}})
	if !res.IsError || fixture.ResultText(res) != errForecastNotYet {
		t.Errorf("deferred: %q (isError %v), want %q", fixture.ResultText(res), res.IsError, errForecastNotYet)
	}
	res = c.call(CallToolName, map[string]any{"name": "weather__get_forcast", "arguments": map[string]any{}})
	if want := "Error: Unknown tool 'weather__get_forcast'. Did you mean: weather__get_forecast?"; !res.IsError || fixture.ResultText(res) != want {
		t.Errorf("unknown: %q (isError %v), want %q", fixture.ResultText(res), res.IsError, want)
	}
	if n := len(fx.AllCalls()); n != 0 {
		t.Fatalf("%d upstream calls before loading", n)
	}

	c.search(map[string]any{"tool_names": []string{"weather__get_forecast"}})
	for _, arguments := range []any{
		map[string]any{"location": "Rome", "units": "celsius"},
		`{"location":"Rome","units":"celsius"}`,
	} {
		res = c.call(CallToolName, map[string]any{"name": "weather__get_forecast", "arguments": arguments})
		if want := `weather.get_forecast {"location":"Rome","units":"celsius"}`; res.IsError || fixture.ResultText(res) != want {
			t.Errorf("arguments %#v: %q (isError %v), want %q", arguments, fixture.ResultText(res), res.IsError, want)
		}
	}
	// An eager tool works through call_tool as well.
	res = c.call(CallToolName, map[string]any{"name": "clock__now", "arguments": map[string]any{"timezone": "UTC"}})
	if res.IsError || fixture.ResultText(res) != `clock.now {"timezone":"UTC"}` {
		t.Errorf("eager via call_tool: %q", fixture.ResultText(res))
	}
	if n := len(fx.CallsTo("weather", "get_forecast")); n != 2 {
		t.Errorf("%d upstream calls, want 2", n)
	}
}

// TestManifestCompactPastBudget: with hundreds of deferred servers the
// manifest keeps one line per server (count and summary) and drops the
// tool names, so deferring still saves tokens.
func TestManifestCompactPastBudget(t *testing.T) {
	tests := []struct {
		servers   int
		wantNames bool
	}{
		{servers: 5, wantNames: true},
		{servers: 400, wantNames: false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.servers), func(t *testing.T) {
			h := &Hub{}
			h.live.Store(&live{cfg: &config.Config{Servers: map[string]*config.Server{}}})
			c := &Catalog{}
			for i := range tt.servers {
				server := fmt.Sprintf("server%03d", i)
				for j := range 3 {
					c.Tools = append(c.Tools, &Tool{
						Name: fmt.Sprintf("%s__tool_%d", server, j), Server: server, Deferred: true,
						Def: &mcp.Tool{Description: fmt.Sprintf("Does task %d of server %d.", j, i)},
					})
				}
			}
			m := h.manifest(c, nil)
			if got := strings.Count(m, "- server"); got != tt.servers {
				t.Errorf("%d server entries, want %d", got, tt.servers)
			}
			if got := strings.Contains(m, "server000__tool_0"); got != tt.wantNames {
				t.Errorf("manifest lists tool names: %v, want %v", got, tt.wantNames)
			}
			if !tt.wantNames {
				if !strings.Contains(m, "- server000 (3 tools): Does task 0 of server 0.") {
					t.Errorf("compact line missing:\n%s", m[:200])
				}
				if len(m) > 2*manifestBudget {
					t.Errorf("compact manifest is %d characters", len(m))
				}
			}
		})
	}
}

// TestMinifySchema: search results give a schema without its labels, in
// the upstream's key order, and nothing else changes.
func TestMinifySchema(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"labels at schema positions",
			`{"$schema":"http://json-schema.org/draft-07/schema#","title":"argsModel","type":"object","properties":{"title":{"type":"string","title":"Title","default":null},"n":{"type":"integer","default":3}},"required":["title"]}`,
			`{"type":"object","properties":{"title":{"type":"string"},"n":{"type":"integer","default":3}},"required":["title"]}`},
		{"nested schemas",
			`{"type":"array","items":{"title":"I","anyOf":[{"title":"x","type":"string"},{"type":"null"}]},"$defs":{"A":{"title":"A","type":"object"}}}`,
			`{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"null"}]},"$defs":{"A":{"type":"object"}}}`},
		{"data is not a schema", `{"enum":["title"],"examples":[{"title":"keep","default":null}],"const":{"$schema":1}}`,
			`{"enum":["title"],"examples":[{"title":"keep","default":null}],"const":{"$schema":1}}`},
		{"a title that is not a string stays", `{"title":{"type":"string"}}`, `{"title":{"type":"string"}}`},
		{"numbers and text as written", "{ \"default\" : 1.50, \"description\": \"a<b>&c \\u00e9\" }", `{"default":1.50,"description":"a<b>&c \u00e9"}`},
		{"boolean schemas", `{"properties":{"a":true,"b":false},"additionalProperties":false}`, `{"properties":{"a":true,"b":false},"additionalProperties":false}`},
		{"not JSON", `{"a":`, `{"a":`},
	}
	for _, tt := range tests {
		if got := minifySchema([]byte(tt.in)); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
