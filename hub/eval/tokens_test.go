package eval

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

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

// TestCorpusTokensFixture counts the fixture corpus through a real hub:
// every tool exposed against the first tools/list with every server
// deferred (search_tools with its manifest, and call_tool).
func TestCorpusTokensFixture(t *testing.T) {
	c, _ := loadFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h, err := NewHub(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	all, err := h.AllToolDefinitions()
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(c.Tools()) {
		t.Fatalf("%d definitions for %d tools", len(all), len(c.Tools()))
	}
	if !strings.Contains(string(all[0]), `"name":"weather__get_current"`) || !strings.Contains(string(all[0]), `"inputSchema":{`) {
		t.Errorf("first definition %s", all[0])
	}
	first, err := h.FirstToolsList("")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range first {
		var def struct{ Name string }
		if err := json.Unmarshal(d, &def); err != nil {
			t.Fatal(err)
		}
		names = append(names, def.Name)
	}
	if strings.Join(names, ",") != "call_tool,search_tools" {
		t.Fatalf("first tools/list %v, want the two meta-tools", names)
	}
	if !strings.Contains(string(first[1]), "weather__get_current") {
		t.Errorf("search_tools lacks the manifest: %s", first[1])
	}

	r, err := HubTokens(ctx, h)
	if err != nil {
		t.Fatal(err)
	}
	// Eight small tools: the meta-tools cost more than listing them all;
	// discovery pays off from a few dozen tools (the etom corpus saves ~99%).
	want := TokenReport{AllTools: 326, Discovery: 523}
	want.SavingPct = 100 * float64(want.AllTools-want.Discovery) / float64(want.AllTools)
	if r != want {
		t.Errorf("tokens %+v, want %+v", r, want)
	}
	r2, err := CorpusTokens(ctx, c)
	if err != nil || r2 != r {
		t.Errorf("CorpusTokens = %+v, %v; want %+v", r2, err, r)
	}
}

func TestObjectSchema(t *testing.T) {
	for in, want := range map[string]string{
		``:                                    `{"type":"object"}`,
		`nope`:                                `{"type":"object"}`,
		`null`:                                `{"type":"object"}`,
		`{"type": "object", "x": 1}`:          `{"type": "object", "x": 1}`,
		`{"type":["object","null"]}`:          `{"type":"object"}`,
		`{"properties":{"a":{"type":"int"}}}`: `{"properties":{"a":{"type":"int"}},"type":"object"}`,
	} {
		got, err := objectSchema(json.RawMessage(in))
		if err != nil || string(got) != want {
			t.Errorf("objectSchema(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestNewHubErrors(t *testing.T) {
	c := &Corpus{Servers: []Server{{Name: "a"}, {Name: "a"}}}
	if _, err := NewHub(context.Background(), c); err == nil || !strings.Contains(err.Error(), "duplicate server") {
		t.Errorf("duplicate server: %v", err)
	}
}
