package hub

// One test per hub item of docs/search-tools.md (X*, C*, D*, P*, K*,
// ST1, and S1 end to end). Fixtures are in helpers_test.go.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

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

const (
	errNoArgs         = "Error: Please provide at least one of: query, server_name, or tool_names."
	errForecastNotYet = "Error: Tool 'weather__get_forecast' is not yet loaded. Use the 'search_tools' tool to discover and load it first, then call it again."
)

// foundBlock is the first line of a tool's block: "  name: " when the
// name starts with "<server>__", else "  [server] name: ".
var foundBlock = regexp.MustCompile(`(?m)^  (?:\[([^\]]+)\] )?([A-Za-z0-9_-]+): `)

// foundNames lists the tools a search_tools result shows, in order.
func foundNames(text string) []string {
	var out []string
	for _, m := range foundBlock.FindAllStringSubmatch(text, -1) {
		out = append(out, m[2])
	}
	return out
}

// foundServers lists the [server] of each block of a search_tools result.
func foundServers(text string) []string {
	var out []string
	for _, m := range foundBlock.FindAllStringSubmatch(text, -1) {
		server := m[1]
		if server == "" {
			server, _, _ = strings.Cut(m[2], "__")
		}
		out = append(out, server)
	}
	return out
}

func searchDescription(t *testing.T, c *testClient) string {
	t.Helper()
	st := c.tool(SearchToolsName)
	if st == nil {
		t.Fatalf("no search_tools in %v", c.toolNames())
	}
	return st.Description
}

// --- Definition and manifest ---

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

// --- Execution ---

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
		fixture.Tool{"blank", "", `{"type":"object","properties":{"x":{},"y":{"type":["string","null"],"description":"  Why\n not  "}},"required":["y"]}`},
		fixture.Tool{"noparams", "Takes nothing.", `{"type":"object"}`})
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
	fx.Define("pre", fixture.Tool{"tool", "First line.\n\n    - item one\n    - item two  ", `{"type":"object","title":"toolArguments","properties":{"title":{"type":"string","title":"Title","default":null}}}`})
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

// --- Calls ---

func TestSpecC1CallBeforeLoading(t *testing.T) {
	fx := fixture.NewServers()
	h := newTestHub(t, fixture.SmallConfig(), fx)
	c := connectClient(t, h, "")
	args := map[string]any{"location": "Paris"}
	res := c.call("weather__get_forecast", args)
	if !res.IsError || fixture.ResultText(res) != errForecastNotYet {
		t.Errorf("got %q (isError %v), want %q", fixture.ResultText(res), res.IsError, errForecastNotYet)
	}
	if n := len(fx.CallsTo("weather", "")); n != 0 {
		t.Errorf("the upstream was called %d times", n)
	}
	c.search(map[string]any{"tool_names": []string{"weather__get_forecast"}})
	res = c.call("weather__get_forecast", args)
	if res.IsError || fixture.ResultText(res) != `weather.get_forecast {"location":"Paris"}` {
		t.Errorf("after loading: %q (isError %v)", fixture.ResultText(res), res.IsError)
	}
	if n := len(fx.CallsTo("weather", "get_forecast")); n != 1 {
		t.Errorf("the upstream was called %d times, want 1", n)
	}
}

func TestSpecC2AutoLoadOnCall(t *testing.T) {
	fx := fixture.NewServers()
	cfg := fixture.SmallConfig()
	cfg.Discovery.AutoLoadOnCall = true
	h := newTestHub(t, cfg, fx)
	c := connectClient(t, h, "")
	res := c.call("weather__get_forecast", map[string]any{"location": "Oslo"})
	if res.IsError || fixture.ResultText(res) != `weather.get_forecast {"location":"Oslo"}` {
		t.Errorf("got %q (isError %v)", fixture.ResultText(res), res.IsError)
	}
	if n := c.listChanged(1); n != 1 {
		t.Errorf("%d list_changed, want 1", n)
	}
	if c.tool("weather__get_forecast") == nil {
		t.Error("the tool was not loaded")
	}
	if n := len(fx.CallsTo("weather", "get_forecast")); n != 1 {
		t.Errorf("the upstream was called %d times, want 1", n)
	}
	// Through call_tool too.
	res = c.call(CallToolName, map[string]any{"name": "math__add", "arguments": map[string]any{"a": 1, "b": 2}})
	if res.IsError || fixture.ResultText(res) != `math.add {"a":1,"b":2}` {
		t.Errorf("call_tool: %q (isError %v)", fixture.ResultText(res), res.IsError)
	}
	if n := c.listChanged(2); n != 2 || c.tool("math__add") == nil {
		t.Errorf("call_tool with auto_load_on_call: %d list_changed, want 2, and math__add loaded", n)
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

func TestSpecC4MetaToolsNotForwarded(t *testing.T) {
	fx := fixture.NewServers()
	// An upstream offering a tool under a meta-tool name, unprefixed, at
	// start-up: a config error.
	fx.Define("impostor", fixture.Tool{"search_tools", "Impostor.", `{"type":"object"}`})
	cfg := fixture.SmallConfig()
	cfg.Servers["impostor"] = fixture.ServerEntry("impostor", fixture.WithPrefix(""), fixture.DeferLoading(false))
	cfg.ServerOrder = append(cfg.ServerOrder, "impostor")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if h, err := New(ctx, cfg, Options{Logger: quietLogger, Builtin: fx.Builtin, StartupWait: 20 * time.Second}); err == nil {
		h.Close()
		t.Error("New accepted an upstream tool exposed as search_tools")
	} else if !strings.Contains(err.Error(), "'search_tools'") {
		t.Errorf("error does not name the meta-tool: %v", err)
	}

	// The same tools appearing later: the hub keeps its own.
	fx.Define("impostor", fixture.Tool{"other", "Harmless.", `{"type":"object"}`})
	h := newTestHub(t, cfg, fx)
	c := connectClient(t, h, "")
	fx.AddTool("impostor", fixture.Tool{"search_tools", "Impostor.", `{"type":"object"}`})
	fx.AddTool("impostor", fixture.Tool{"call_tool", "Impostor.", `{"type":"object"}`})
	waitFor(t, "both collisions are reported", func() bool { return len(h.Catalog().Problems) == 2 })
	if d := searchDescription(t, c); !strings.Contains(d, "Deferred tools by server") {
		t.Errorf("search_tools is not the hub's:\n%s", d)
	}
	if text, _ := c.search(map[string]any{"query": "forecast"}); !strings.HasPrefix(text, "Found ") {
		t.Errorf("search_tools: %s", text)
	}
	c.call(CallToolName, map[string]any{"name": "clock__now", "arguments": map[string]any{}})
	c.call(CallToolName, map[string]any{"name": "search_tools", "arguments": map[string]any{"query": "x"}})
	for _, call := range fx.AllCalls() {
		if call.Server == "impostor" || isMetaTool(call.Tool) {
			t.Errorf("meta-tool call forwarded upstream: %+v", call)
		}
	}

	t.Run("batch", func(t *testing.T) { testBatchOrder(t, h, fx) })
}

// testBatchOrder sends one JSON-RPC batch (protocol 2025-03-26 over stdio)
// mixing meta-tool and upstream calls; the answers come back in call order.
func testBatchOrder(t *testing.T, h *Hub, fx *fixture.Servers) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.ServeStdio(ctx, "", inR, outW) }()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("ServeStdio did not return")
		}
	})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	next := func(prefix string) string {
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatal("stdout closed")
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no line starting with %q", prefix)
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"batch","version":"1"}}}`)
	next(`{"jsonrpc":"2.0","id":0,`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	before := len(fx.CallsTo("clock", "now"))
	send(`[` +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_tools","arguments":{"tool_names":["math__add"]}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"clock__now","arguments":{"timezone":"UTC"}}},` +
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"clock__now","arguments":{"timezone":"Asia/Tokyo"}}}},` +
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search_tools","arguments":{}}},` +
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"clock__now","arguments":{"timezone":"Europe/Rome"}}}` +
		`]`)
	var resps []struct {
		ID     int                       `json:"id"`
		Result mcp.CallToolResult        `json:"result"`
		Error  *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(next("[")), &resps); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		prefix  string
		isError bool
	}{
		{"Found 1 tool(s):", false},
		{`clock.now {"timezone":"UTC"}`, false},
		{`clock.now {"timezone":"Asia/Tokyo"}`, false},
		{errNoArgs, true},
		{`clock.now {"timezone":"Europe/Rome"}`, false},
	}
	if len(resps) != len(want) {
		t.Fatalf("%d responses, want %d", len(resps), len(want))
	}
	for i, r := range resps {
		if r.ID != i+1 || r.Error != nil {
			t.Errorf("response %d: id %d, error %v", i, r.ID, r.Error)
			continue
		}
		if text := fixture.ResultText(&r.Result); !strings.HasPrefix(text, want[i].prefix) || r.Result.IsError != want[i].isError {
			t.Errorf("response %d: %q (isError %v), want %q", i, text, r.Result.IsError, want[i].prefix)
		}
	}
	if n := len(fx.CallsTo("clock", "now")) - before; n != 3 {
		t.Errorf("%d upstream calls, want 3", n)
	}
}

// --- Partition, sessions, changes ---

func TestSpecP1DiscoveryOff(t *testing.T) {
	fx := fixture.NewServers()
	cfg := fixture.SmallConfig()
	cfg.Discovery = config.Discovery{} // absent; defer_loading stays set and is ignored
	h := newTestHub(t, cfg, fx)
	c := connectClient(t, h, "")
	want := fixture.Sorted("weather__get_forecast", "weather__get_current", "math__add", "math__multiply", "clock__now")
	if got := c.toolNames(); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if ins := c.cs.InitializeResult().Instructions; ins != "" {
		t.Errorf("instructions = %q", ins)
	}
	res := c.call("weather__get_forecast", map[string]any{"location": "Lima"})
	if res.IsError || len(fx.CallsTo("weather", "get_forecast")) != 1 {
		t.Errorf("call: %q", fixture.ResultText(res))
	}
	// With discovery off the hub's meta-tool names are not reserved.
	if _, err := c.callErr(SearchToolsName, map[string]any{"query": "x"}); err == nil {
		t.Error("search_tools answered with discovery off")
	}
}

func TestSpecP2DeferAll(t *testing.T) {
	cfg := fixture.NewConfig(config.Discovery{Enabled: true, DeferAll: true},
		fixture.ServerEntry("weather"), fixture.ServerEntry("math"), fixture.ServerEntry("clock"))
	h := newTestHub(t, cfg, fixture.NewServers())
	c := connectClient(t, h, "")
	if got, want := c.toolNames(), fixture.Sorted(SearchToolsName, CallToolName); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if d := searchDescription(t, c); !strings.Contains(d, "- clock (1 tool): clock__now\n  Get the current time in a timezone.") {
		t.Errorf("manifest:\n%s", d)
	}
	// call_tool: false leaves only search_tools.
	cfg2 := fixture.NewConfig(config.Discovery{Enabled: true, DeferAll: true, CallTool: new(bool)}, fixture.ServerEntry("math"))
	c2 := connectClient(t, newTestHub(t, cfg2, fixture.NewServers()), "")
	if got := c2.toolNames(); !slices.Equal(got, []string{SearchToolsName}) {
		t.Errorf("call_tool off: tools = %v", got)
	}
	if ins := c2.cs.InitializeResult().Instructions; strings.Contains(ins, "call_tool") {
		t.Errorf("instructions mention call_tool while it is off:\n%s", ins)
	}
}

func TestSpecP3SessionsIndependent(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	a := connectClient(t, h, "")
	b := connectClient(t, h, "")
	a.search(map[string]any{"tool_names": []string{"math__add"}})
	b.search(map[string]any{"query": "current weather"})
	base := []string{CallToolName, "clock__now", SearchToolsName}
	if got, want := a.toolNames(), fixture.Sorted(append(base, "math__add")...); !slices.Equal(got, want) {
		t.Errorf("session A: %v, want %v", got, want)
	}
	bt := b.toolNames()
	if slices.Contains(bt, "math__add") || !slices.Contains(bt, "weather__get_current") {
		t.Errorf("session B: %v", bt)
	}
	if na, nb := a.listChanged(1), b.listChanged(1); na != 1 || nb != 1 {
		t.Errorf("list_changed: A %d, B %d; want 1 each", na, nb)
	}
	// A's deferred tool is still not callable in B.
	if res := b.call("math__add", map[string]any{"a": 1, "b": 2}); !res.IsError {
		t.Errorf("B called A's loaded tool: %s", fixture.ResultText(res))
	}
}

func TestSpecP4UpstreamChanges(t *testing.T) {
	fx := fixture.NewServers()
	h := newTestHub(t, fixture.SmallConfig(), fx)
	c := connectClient(t, h, "")
	c.search(map[string]any{"tool_names": []string{"weather__get_forecast", "weather__get_current"}})
	if n := c.listChanged(1); n != 1 {
		t.Fatalf("%d list_changed after loading, want 1", n)
	}

	// Added upstream: searchable (and in the manifest).
	fx.AddTool("weather", fixture.Tool{"get_alerts", "Get severe weather alerts for a region.",
		`{"type":"object","properties":{"region":{"type":"string"}},"required":["region"]}`})
	waitFor(t, "the new tool is in the manifest", func() bool {
		return strings.Contains(searchDescription(t, c), "- weather (3 tools): weather__get_alerts, weather__get_current, weather__get_forecast")
	})
	if n := c.listChanged(2); n < 2 {
		t.Errorf("search_tools' manifest changed without list_changed (%d)", n)
	}
	text, _ := c.search(map[string]any{"query": "severe alerts"})
	if found := foundNames(text); len(found) == 0 || found[0] != "weather__get_alerts" {
		t.Fatalf("new tool not found:\n%s", text)
	}
	for _, name := range []string{"weather__get_forecast", "weather__get_current", "weather__get_alerts"} {
		if c.tool(name) == nil {
			t.Errorf("%s is not listed after the rebuild", name)
		}
	}

	// Removed upstream while loaded: gone, and the session is notified;
	// the loaded tools that still exist stay loaded.
	n := c.listChanged(0)
	fx.RemoveTools("weather", "get_forecast")
	waitFor(t, "the removed tool leaves the list", func() bool { return c.tool("weather__get_forecast") == nil })
	if got := c.listChanged(n + 1); got <= n {
		t.Errorf("no list_changed after the loaded tool was removed (%d -> %d)", n, got)
	}
	want := fixture.Sorted(CallToolName, "clock__now", SearchToolsName, "weather__get_alerts", "weather__get_current")
	if got := c.toolNames(); !slices.Equal(got, want) {
		t.Errorf("tools = %v, want %v", got, want)
	}
	if _, err := c.callErr("weather__get_forecast", map[string]any{"location": "x"}); err == nil {
		t.Error("the removed tool is still callable")
	}
	if res := c.call("weather__get_current", map[string]any{"location": "Kyiv"}); res.IsError {
		t.Errorf("a tool that stayed loaded: %s", fixture.ResultText(res))
	}
	// Removing a tool of a deferred server the session never loaded changes
	// only the manifest; a change elsewhere (a catalog rebuild that leaves
	// this session's list alone) sends nothing.
	n = c.listChanged(0)
	fx.AddTool("clock", fixture.Tool{"zone", "", `{"type":"object"}`})
	waitFor(t, "the eager tool appears", func() bool { return c.tool("clock__zone") != nil })
	if got := c.listChanged(n + 1); got != n+1 {
		t.Errorf("eager tool added: %d list_changed, want 1", got-n)
	}
}

// --- Toolsets ---

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
	_, err = ParseConfig("hub.yaml", []byte("servers:\n  math: {command: echo}\ntoolsets:\n  t:\n    servers:\n      x: true\n"))
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

// --- Stats ---

func TestSpecST1Stats(t *testing.T) {
	h := newTestHub(t, fixture.SmallConfig(), fixture.NewServers())
	c := connectClient(t, h, "")
	c.search(map[string]any{"tool_names": []string{"math__add"}}) // 1 discovered
	c.search(map[string]any{"tool_names": []string{"math__add"}}) // 0
	c.search(map[string]any{"query": "zzyzx"})                    // 0
	c.search(map[string]any{"server_name": "weather"})            // 2
	c.search(map[string]any{})                                    // error
	c.call("math__add", map[string]any{"a": 1, "b": 2})           // math
	c.call(CallToolName, map[string]any{"name": "math__add", "arguments": map[string]any{"a": 2, "b": 2}})
	c.call("clock__now", map[string]any{})                         // clock
	c.call(CallToolName, map[string]any{"name": "math__multiply"}) // not loaded: error
	c.call(CallToolName, map[string]any{"name": "nope"})           // unknown: error
	st := h.sessionList()[0].Stats()
	if st.Searches != 4 {
		t.Errorf("searches = %d, want 4 (the invalid call is an error, not a search)", st.Searches)
	}
	if st.ToolsDiscovered != 3 {
		t.Errorf("tools discovered = %d, want 3", st.ToolsDiscovered)
	}
	wantTool := map[string]int{SearchToolsName: 5, CallToolName: 3, "math__add": 2, "clock__now": 1}
	if fmt.Sprint(st.CallsByTool) != fmt.Sprint(wantTool) {
		t.Errorf("calls by tool = %v, want %v", st.CallsByTool, wantTool)
	}
	wantServer := map[string]int{MetaServer: 8, "math": 2, "clock": 1}
	if fmt.Sprint(st.CallsByServer) != fmt.Sprint(wantServer) {
		t.Errorf("calls by server = %v, want %v", st.CallsByServer, wantServer)
	}
	if st.Errors != 3 {
		t.Errorf("errors = %d, want 3", st.Errors)
	}
}

// --- Config and naming ---

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
	cfg, err := ParseConfig("hub.yaml", []byte(yaml))
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
	cfg, err = ParseConfig("hub.yaml", []byte("servers:\n  math: {command: echo, defer_loading: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if d := cfg.Discovery; d.Enabled || d.SearchLimit() != 5 || !d.CallToolEnabled() || d.AutoLoadOnCall || cfg.Deferred("math") {
		t.Errorf("defaults: %+v, Deferred(math) = %v", d, cfg.Deferred("math"))
	}

	// Bad toolset entries.
	for _, entry := range []string{"3", "{include: [add]}", "{exclude: [add], other: 1}", "\"maybe\""} {
		_, err := ParseConfig("hub.yaml", []byte("servers:\n  math: {command: echo}\ntoolsets:\n  t:\n    servers:\n      math: "+entry+"\n"))
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

func TestSpecExposedNameRule(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct {
		prefix, name, want string
	}{
		{"weather", "get_forecast", "weather__get_forecast"},
		{"", "get_forecast", "get_forecast"},
		{"gh", "create-issue", "gh__create-issue"},
		{"my server", "do.thing/x", "my_server__do_thing_x"},
		{"s", "café", "s__caf_"},
		{"", strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{"srv", strings.Repeat("b", 59), "srv__" + strings.Repeat("b", 59)},
	} {
		if got := ExposedName(tc.prefix, tc.name); got != tc.want {
			t.Errorf("ExposedName(%q, %q) = %q, want %q", tc.prefix, tc.name, got, tc.want)
		}
	}
	// Longer than 64: cut, ending in a short stable hash of the full name.
	hashed := regexp.MustCompile(`^[A-Za-z0-9_-]+_[0-9a-f]{8}$`)
	a := ExposedName("srv", long)
	b := ExposedName("srv", long+"b")
	c := ExposedName("srv", long+".c")
	for _, n := range []string{a, b, c} {
		if len(n) != config.MaxNameLength || !hashed.MatchString(n) || !strings.HasPrefix(n, "srv__aaaa") {
			t.Errorf("%q: want %d characters of [A-Za-z0-9_-] ending in _<8 hex>", n, config.MaxNameLength)
		}
	}
	if a == b || b == c || a == c {
		t.Errorf("long names that share a start collide: %q %q %q", a, b, c)
	}
	if ExposedName("srv", long) != a {
		t.Error("not stable")
	}
	if got := ExposedName("", strings.Repeat("x", 65)); len(got) != 64 {
		t.Errorf("65 chars -> %q", got)
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
	cfg, err := ParseConfig("hub.yaml", []byte(`
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
`))
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
