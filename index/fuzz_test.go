package index

// Fuzz targets for the query path (issue 6): Search with arbitrary query and
// server strings (Closest's are in internal/closest), and a build from a
// tool as an upstream may send it.
//
//	go test -run '^$' -fuzz '^FuzzSearch$' -fuzztime 20s ./index
//
// Seed corpora: f.Add below, and testdata/fuzz/FuzzXxx/.

import (
	"encoding/json"
	"slices"
	"testing"
)

// fuzzTools is a small catalog with awkward content: unicode, digits,
// camelCase, an empty description, and schemas of odd shapes.
func fuzzTools() []Tool {
	return []Tool{
		{Name: "weather__get_forecast", Server: "weather", Description: "Get weather forecast for a location.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"},"units":{"type":"string","description":"celsius or fahrenheit"}}}`)},
		{Name: "weather__get_current", Server: "weather", Description: "Get current weather conditions.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}}}`)},
		{Name: "math__add", Server: "math", Description: "Add two numbers together.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","description":"First number"},"b":{"type":"number"}}}`)},
		{Name: "math__multiply", Server: "math", Description: "Multiply two numbers together."},
		{Name: "clock__now", Server: "clock", Title: "Now", Description: "Get the current time in a timezone.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"tz":{"items":[{"description":5}],"properties":true}}}`)},
		{Name: "gh__createIssueV2", Server: "gh", Description: "Create a GitHub issue (v2 API).", ServerDescription: "GitHub",
			InputSchema: json.RawMessage(`not json`)},
		{Name: "unicode__天気_予報", Server: "unicode", Description: "Prévisions météo: ünïcödé 🌧."},
		{Name: "blank", Server: "", Description: ""},
	}
}

// FuzzSearch: Search never panics; it returns at most k results, each a
// tool of the index, each once, from the requested server when one is
// given, best first.
func FuzzSearch(f *testing.F) {
	f.Add("weather forecast", "", 5)
	f.Add("add numbers", "math", 3)
	f.Add("get", "weather", 1)
	f.Add("create issue v2", "gh", 10)
	f.Add("createIssueV2", "", 2)
	f.Add("天気", "unicode", 5)
	f.Add("météo 🌧", "", 5)
	f.Add("the a of", "", 5)
	f.Add("", "", 5)
	f.Add("time", "nope", 5)
	f.Add("time", "", 0)
	f.Add("time", "", -1)
	f.Add("fetch retrieve obtain get", "", 1000000)
	f.Add("a_b-c.d/e:f", "", 5)
	f.Add("\x00\xff\xfe", "\xff", 5)
	ix, err := New(fuzzTools())
	if err != nil {
		f.Fatal(err)
	}
	known := map[string]string{}
	for _, t := range fuzzTools() {
		known[t.Name] = t.Server
	}
	f.Fuzz(func(t *testing.T, query, server string, k int) {
		rs := ix.Search(query, server, k)
		if k <= 0 && len(rs) > 0 {
			t.Fatalf("Search(%q, %q, %d) returned %d results for k <= 0", query, server, k, len(rs))
		}
		if k > 0 && len(rs) > k {
			t.Fatalf("Search(%q, %q, %d) returned %d results", query, server, k, len(rs))
		}
		seen := map[string]bool{}
		for i, r := range rs {
			srv, ok := known[r.Name]
			if !ok {
				t.Fatalf("Search(%q, %q, %d) returned unknown tool %q", query, server, k, r.Name)
			}
			if r.Server != srv {
				t.Fatalf("Search(%q, %q, %d): %q has server %q, want %q", query, server, k, r.Name, r.Server, srv)
			}
			if server != "" && srv != server {
				t.Fatalf("Search(%q, %q, %d) returned %q of server %q", query, server, k, r.Name, srv)
			}
			if seen[r.Name] {
				t.Fatalf("Search(%q, %q, %d) returned %q twice", query, server, k, r.Name)
			}
			seen[r.Name] = true
			if r.Score != r.Score || r.Score < 0 { // NaN or negative
				t.Fatalf("Search(%q, %q, %d): %q has score %v", query, server, k, r.Name, r.Score)
			}
			if i > 0 && r.Score > rs[i-1].Score {
				t.Fatalf("Search(%q, %q, %d): results not best first: %v", query, server, k, rs)
			}
		}
		// The same search again gives the same answer (scratch reuse).
		if again := ix.Search(query, server, k); !slices.Equal(again, rs) {
			t.Fatalf("Search(%q, %q, %d) not reproducible: %v then %v", query, server, k, rs, again)
		}
	})
}

// FuzzBuild: a tool as an upstream may send it (any name, description
// and schema bytes) never takes a build down: New refuses only an empty or
// duplicate name, and the index then answers searches, its own name
// included, with tools it holds.
func FuzzBuild(f *testing.F) {
	f.Add("odd__tool", "Does odd things.", `{"type":"object","properties":{"x":{"description":"an x"}}}`, "odd things")
	f.Add("deep", "", `{"properties":{"a":{"properties":{"b":{"items":{"properties":{"c":{"description":"deep"}}}}}}}}`, "c")
	f.Add("ütf__天気", "\xff\xfe météo", `{"properties":{"\u0000":{"description":null}}}`, "天気")
	f.Add("math__add", "duplicate name", `{}`, "add")
	f.Add("", "empty name", ``, "empty")
	f.Add("x", "schema of the wrong shape", `[1,{"properties":true}]`, "x")
	f.Fuzz(func(t *testing.T, name, desc, schema, query string) {
		tools := append(fuzzTools(), Tool{Name: name, Server: "fz", Description: desc, InputSchema: json.RawMessage(schema)})
		ix, err := New(tools)
		dup := slices.ContainsFunc(fuzzTools(), func(x Tool) bool { return x.Name == name })
		if err != nil {
			if name != "" && !dup {
				t.Fatalf("New refused tool %q: %v", name, err)
			}
			return
		}
		if name == "" || dup {
			t.Fatalf("New accepted tool %q (empty or duplicate)", name)
		}
		for _, q := range []string{query, name} {
			for _, r := range ix.Search(q, "", 20) {
				if !slices.ContainsFunc(tools, func(x Tool) bool { return x.Name == r.Name && x.Server == r.Server }) {
					t.Fatalf("Search(%q) returned %+v, not a tool of the index", q, r)
				}
				if r.Score != r.Score || r.Score < 0 {
					t.Fatalf("Search(%q): %q has score %v", q, r.Name, r.Score)
				}
			}
		}
	})
}
