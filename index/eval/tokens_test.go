package eval

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/index"
)

func TestManifest(t *testing.T) {
	small := []index.Tool{
		{Name: "weather__get_forecast", Server: "weather", Description: "Get weather forecast for a location."},
		{Name: "weather__get_current", Server: "weather", Description: "Get current weather conditions."},
		{Name: "math__add", Server: "math", Description: "Add two numbers together. Integers only."},
		{Name: "solo__one", Server: "solo", Description: ""},
	}
	var big []index.Tool
	for i := range 12 {
		big = append(big, index.Tool{Name: fmt.Sprintf("bigserver__tool_%d", i), Server: "bigserver",
			Description: fmt.Sprintf("Tool number %d on big server.", i)})
	}
	tests := []struct {
		name    string
		tools   []index.Tool
		want    []string
		notWant []string
	}{
		{"small", small, []string{
			"- math (1 tool): math__add\n  Add two numbers together.\n",
			"- solo (1 tool): solo__one\n",
			"- weather (2 tools): weather__get_current, weather__get_forecast\n" +
				"  Get weather forecast for a location. Get current weather conditions.\n",
		}, []string{"1 tools", "Integers"}},
		{"big", big, []string{
			"- bigserver (12 tools): bigserver__tool_0, bigserver__tool_1, bigserver__tool_2, bigserver__tool_3, ... and 8 more\n",
			"  Tool number 0 on big server. Tool number 1 on big server. Tool number 2 on bi...\n",
		}, []string{"tool_4", "tool_10"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := Manifest(tc.tools)
			for _, w := range tc.want {
				if !strings.Contains(m, w) {
					t.Errorf("manifest lacks %q:\n%s", w, m)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(m, w) {
					t.Errorf("manifest has %q:\n%s", w, m)
				}
			}
		})
	}
	// Servers sorted by name.
	m := Manifest(small)
	if !(strings.Index(m, "- math") < strings.Index(m, "- solo") && strings.Index(m, "- solo") < strings.Index(m, "- weather")) {
		t.Errorf("servers not sorted:\n%s", m)
	}
	for _, line := range strings.Split(Manifest(big), "\n") {
		if strings.HasPrefix(line, "  ") && len([]rune(line)) > 82 {
			t.Errorf("summary over 80 characters: %q", line)
		}
	}
}

func TestCountTokens(t *testing.T) {
	n, err := CountTokens([]json.RawMessage{json.RawMessage(`{"name": "x"}`)})
	if err != nil {
		t.Fatal(err)
	}
	// Compact form {"name":"x"} is 5 o200k_base tokens: {" name ":" x "}.
	if n != 5 {
		t.Errorf("tokens = %d, want 5", n)
	}
	if _, err := CountTokens([]json.RawMessage{json.RawMessage(`{`)}); err == nil {
		t.Error("invalid JSON: want error")
	}
	if n, err := CountTokens(nil); err != nil || n != 0 {
		t.Errorf("empty = %d, %v", n, err)
	}
}

func TestCompareTokensFixture(t *testing.T) {
	c, _ := loadFixture(t)
	tools := c.Tools()
	all, err := ToolDefinitions(tools)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(tools) {
		t.Fatalf("%d definitions for %d tools", len(all), len(tools))
	}
	var def struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(all[0], &def); err != nil || def.Name != "weather__get_forecast" || len(def.InputSchema) == 0 {
		t.Errorf("first definition %s (%v)", all[0], err)
	}
	meta, err := SpecMetaToolDefinitions(tools)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta) != 2 || !strings.Contains(string(meta[0]), `"name":"search_tools"`) || !strings.Contains(string(meta[1]), `"name":"call_tool"`) {
		t.Fatalf("meta definitions %s", meta)
	}
	if !strings.Contains(string(meta[0]), "weather__get_current, weather__get_forecast") {
		t.Errorf("search_tools description lacks the manifest: %s", meta[0])
	}
	r, err := CompareTokens(all, meta)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := CountTokens(all)
	d, _ := CountTokens(meta)
	if r.AllTools != a || r.Discovery != d || a == 0 || d == 0 {
		t.Errorf("report %+v, counts %d %d", r, a, d)
	}
	if want := 100 * float64(a-d) / float64(a); r.SavingPct != want {
		t.Errorf("saving %v, want %v", r.SavingPct, want)
	}
}

func TestToolDefinitionsBadSchema(t *testing.T) {
	defs, err := ToolDefinitions([]index.Tool{{Name: "s__t", InputSchema: json.RawMessage(`nope`)}})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(defs[0]); got != `{"name":"s__t","inputSchema":{"type":"object"}}` {
		t.Errorf("definition %s", got)
	}
}
