package index

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
)

func schema(t testing.TB, props ...string) json.RawMessage {
	t.Helper()
	// props: name, type, description triples.
	p := map[string]any{}
	for i := 0; i+2 < len(props); i += 3 {
		prop := map[string]any{"type": props[i+1]}
		if props[i+2] != "" {
			prop["description"] = props[i+2]
		}
		p[props[i]] = prop
	}
	b, err := json.Marshal(map[string]any{"type": "object", "properties": p})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wideTools is the WIDE fixture of spec/search_tools.md: SMALL (weather,
// math, clock) plus the search server.
func wideTools(t testing.TB) []Tool {
	return []Tool{
		{Name: "weather__get_forecast", Server: "weather", Description: "Get weather forecast for a location.",
			InputSchema: schema(t, "location", "string", "", "units", "string", "celsius or fahrenheit")},
		{Name: "weather__get_current", Server: "weather", Description: "Get current weather conditions.",
			InputSchema: schema(t, "location", "string", "")},
		{Name: "math__add", Server: "math", Description: "Add two numbers together.",
			InputSchema: schema(t, "a", "number", "First number", "b", "number", "")},
		{Name: "math__multiply", Server: "math", Description: "Multiply two numbers together.",
			InputSchema: schema(t, "a", "number", "", "b", "number", "")},
		{Name: "clock__now", Server: "clock", Description: "Get the current time in a timezone.",
			InputSchema: schema(t, "timezone", "string", "")},
		{Name: "search__brave_web_search", Server: "search", Description: "Search the web using Brave"},
		{Name: "search__brave_local_search", Server: "search", Description: "Search local results using Brave"},
	}
}

func mustNew(t testing.TB, tools []Tool) *Index {
	t.Helper()
	ix, err := New(tools)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

func names(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Name
	}
	return out
}

func first(rs []Result) string {
	if len(rs) == 0 {
		return ""
	}
	return rs[0].Name
}

// T1: splitting and lowercasing.
func TestAnalyzerSplits(t *testing.T) {
	an, err := newAnalyzer(Options{}) // no stemming or stop words: raw splitting
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want []string
	}{
		{"getCurrentWeather", []string{"get", "current", "weather"}},
		{"search_brave_web", []string{"search", "brave", "web"}},
		{"timezone.", []string{"timezone"}},
		{"a-b.c/d:e f", []string{"a", "b", "c", "d", "e", "f"}},
		{"WEATHER Forecast", []string{"weather", "forecast"}},
		{"v2api", []string{"v", "2", "api"}},
		{"s3Bucket", []string{"s", "3", "bucket"}},
		{"HTMLParser", []string{"html", "parser"}},
		{"parseHTTPResponse2xx", []string{"parse", "http", "response", "2", "xx"}},
		{"天气预报", []string{"天", "气", "预", "报"}},
		{"café_menu", []string{"café", "menu"}},
		{"fetch, then: store!", []string{"fetch", "then", "store"}},
		{"   ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got := an.terms(tc.in)
			if len(got) == 0 && len(tc.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("terms(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// The default pipeline also drops stop words and numbers and stems plurals.
func TestDefaultAnalyzer(t *testing.T) {
	an, err := newAnalyzer(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want []string
	}{
		{"Please list the 25 newest files for me", []string{"list", "newest", "file"}},
		{"get_issues", []string{"get", "issue"}},
		{"I want to use the queries", []string{"query"}},
	}
	for _, tc := range tests {
		if got := an.terms(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("terms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if _, err := newAnalyzer(Options{Stemmer: "klingon"}); err == nil {
		t.Error("unknown stemmer: want error")
	}
}

// T1 end to end: split identifiers match their words, and a trailing period
// does not stop a match.
func TestSplitWordsMatch(t *testing.T) {
	ix := mustNew(t, []Tool{
		{Name: "w__getCurrentWeather", Server: "w", Description: "Conditions now."},
		{Name: "s__search_brave_web", Server: "s", Description: "Web results."},
		{Name: "c__now", Server: "c", Description: "Time in a timezone."},
	})
	tests := []struct{ query, want string }{
		{"current weather", "w__getCurrentWeather"},
		{"brave", "s__search_brave_web"},
		{"timezone", "c__now"},
		{"timezone.", "c__now"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			if got := first(ix.Search(tc.query, "", 5)); got != tc.want {
				t.Errorf("first = %q, want %q", got, tc.want)
			}
		})
	}
}

// T2: blank queries return nothing.
func TestBlankQuery(t *testing.T) {
	ix := mustNew(t, wideTools(t))
	for _, q := range []string{"", " ", "\t\n", "  \u00a0 "} {
		if got := ix.Search(q, "", 5); got != nil {
			t.Errorf("Search(%q) = %v, want nil", q, got)
		}
	}
}

// T3: case does not change results.
func TestCaseInsensitive(t *testing.T) {
	ix := mustNew(t, wideTools(t))
	tests := [][]string{
		{"weather", "WEATHER", "Weather"},
		{"brave search", "BRAVE SEARCH", "Brave Search"},
		{"get", "GET", "Get"},
	}
	for _, variants := range tests {
		t.Run(variants[0], func(t *testing.T) {
			want := ix.Search(variants[0], "", 10)
			if len(want) == 0 {
				t.Fatalf("%q found nothing", variants[0])
			}
			for _, v := range variants[1:] {
				if got := ix.Search(v, "", 10); !reflect.DeepEqual(got, want) {
					t.Errorf("%q = %v, want %v", v, names(got), names(want))
				}
			}
		})
	}
}

// S1: WIDE rankings.
func TestWideRanking(t *testing.T) {
	ix := mustNew(t, wideTools(t))
	tests := []struct{ query, want string }{
		{"forecast", "weather__get_forecast"},
		{"search web brave", "search__brave_web_search"},
		{"multiply numbers", "math__multiply"},
		{"current weather", "weather__get_current"},
		{"add two numbers", "math__add"},
		{"what time is it in a timezone", "clock__now"},
		{"local results", "search__brave_local_search"},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			got := ix.Search(tc.query, "", 5)
			if first(got) != tc.want {
				t.Errorf("Search(%q) = %v, want first %q", tc.query, names(got), tc.want)
			}
		})
	}
}

// S2: k, server filter, unknown server, unknown words.
func TestLimitsAndFilters(t *testing.T) {
	ix := mustNew(t, wideTools(t))
	tests := []struct {
		name, query, server string
		k                   int
		wantLen             int    // -1: don't check
		wantServer          string // every result from this server
	}{
		{"k limits", "get", "", 1, 1, ""},
		{"k limits 2", "numbers weather search", "", 2, 2, ""},
		{"k zero", "weather", "", 0, 0, ""},
		{"server filter", "get", "weather", 10, 2, "weather"},
		{"server filter excludes", "current", "weather", 10, 1, "weather"},
		{"server filter no match", "forecast", "math", 10, 0, ""},
		{"unknown server", "weather", "nope", 10, 0, ""},
		{"no known word", "xylophone zebra", "", 10, 0, ""},
		{"only stop words", "the and of", "", 10, 0, ""},
		{"word before the cut", pad(MaxQueryBytes-len("weather")) + "weather", "", 10, 2, "weather"},
		{"word past the cut", pad(MaxQueryBytes) + "weather", "", 10, 0, ""},
		{"name past the cut", pad(MaxQueryBytes) + "weather__get_forecast", "", 10, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ix.Search(tc.query, tc.server, tc.k)
			if tc.wantLen >= 0 && len(got) != tc.wantLen {
				t.Fatalf("Search(%.60q, %q, %d) = %v, want %d results", tc.query, tc.server, tc.k, names(got), tc.wantLen)
			}
			for _, r := range got {
				if tc.wantServer != "" && r.Server != tc.wantServer {
					t.Errorf("result %s from server %q, want %q", r.Name, r.Server, tc.wantServer)
				}
			}
		})
	}
}

// pad is n bytes of words no tool has.
func pad(n int) string {
	return strings.Repeat("z", n%2) + strings.Repeat("z ", n/2)
}

// S3: a tool without description is found by its name.
func TestEmptyDescription(t *testing.T) {
	tools := append(wideTools(t), Tool{Name: "files__read_file", Server: "files"})
	ix := mustNew(t, tools)
	for _, q := range []string{"read file", "read_file", "files__read_file", "readFile"} {
		if got := first(ix.Search(q, "", 5)); got != "files__read_file" {
			t.Errorf("Search(%q) first = %q, want files__read_file", q, got)
		}
	}
}

// S4: tiny corpora. The non-negative BM25 idf stays positive even when every tool
// holds the word, so a word in a tool always finds it.
func TestTinyCorpus(t *testing.T) {
	one := []Tool{{Name: "math__add", Server: "math", Description: "Add two numbers together."}}
	two := []Tool{
		{Name: "math__add", Server: "math", Description: "Add two numbers together."},
		{Name: "math__multiply", Server: "math", Description: "Multiply two numbers together."},
	}
	tests := []struct {
		name  string
		tools []Tool
		query string
		want  []string
	}{
		{"one tool, its word", one, "numbers", []string{"math__add"}},
		{"one tool, its server", one, "math", []string{"math__add"}},
		{"one tool, other word", one, "weather", nil},
		{"two tools, shared word", two, "numbers", []string{"math__add", "math__multiply"}},
		{"two tools, distinct word", two, "multiply", []string{"math__multiply"}},
		{"two tools, shared then distinct", two, "multiply two numbers", []string{"math__multiply", "math__add"}},
		{"two tools, add numbers", two, "add numbers", []string{"math__add", "math__multiply"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := mustNew(t, tc.tools)
			got := ix.Search(tc.query, "", 5)
			if !reflect.DeepEqual(names(got), tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("Search(%q) = %v, want %v", tc.query, names(got), tc.want)
			}
			for _, r := range got {
				if r.Score <= 0 {
					t.Errorf("%s score %v, want > 0", r.Name, r.Score)
				}
			}
		})
	}
}

// S5: parameter names and descriptions are searchable.
func TestParamsSearchable(t *testing.T) {
	ix := mustNew(t, wideTools(t))
	tests := []struct{ query, want string }{
		{"fahrenheit", "weather__get_forecast"},
		{"celsius", "weather__get_forecast"},
		{"units", "weather__get_forecast"},
		{"timezone", "clock__now"},
	}
	for _, tc := range tests {
		if got := first(ix.Search(tc.query, "", 5)); got != tc.want {
			t.Errorf("Search(%q) first = %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestNewErrorsAndBadSchemas(t *testing.T) {
	if _, err := New([]Tool{{Name: ""}}); err == nil {
		t.Error("empty name: want error")
	}
	if _, err := New([]Tool{{Name: "a", Server: "s"}, {Name: "a", Server: "t"}}); err == nil {
		t.Error("duplicate name: want error")
	}
	bad := []json.RawMessage{nil, json.RawMessage(`not json`), json.RawMessage(`true`),
		json.RawMessage(`{"properties": 3}`), json.RawMessage(`{"properties": {"x": true, "y": {"description": 5}}}`),
		json.RawMessage(`{"properties": {"q": {"type": "array", "items": [{"type": "string"}]}}}`)}
	var tools []Tool
	for i, s := range bad {
		tools = append(tools, Tool{Name: fmt.Sprintf("s__tool_%d", i), Server: "s", Description: "odd schema", InputSchema: s})
	}
	ix := mustNew(t, tools)
	if ix.Len() != len(bad) {
		t.Errorf("Len = %d, want %d", ix.Len(), len(bad))
	}
	if got := ix.Search("odd schema", "", 10); len(got) != len(bad) {
		t.Errorf("found %d, want %d", len(got), len(bad))
	}
	empty := mustNew(t, nil)
	if empty.Len() != 0 || empty.Search("anything", "", 5) != nil {
		t.Error("empty index: want no results")
	}
}

func TestNestedParams(t *testing.T) {
	s := json.RawMessage(`{"type":"object","properties":{"filter":{"type":"object","properties":{"repository":{"type":"string","description":"owner and name"}}}}}`)
	ix := mustNew(t, []Tool{{Name: "gh__list", Server: "gh", Description: "List things.", InputSchema: s},
		{Name: "gh__other", Server: "gh", Description: "Other things."}})
	for _, q := range []string{"repository", "owner"} {
		if got := first(ix.Search(q, "", 5)); got != "gh__list" {
			t.Errorf("Search(%q) first = %q", q, got)
		}
	}
}

func TestSynonyms(t *testing.T) {
	ix := mustNew(t, []Tool{
		{Name: "db__remove_record", Server: "db", Description: "Remove a record."},
		{Name: "db__fetch_record", Server: "db", Description: "Fetch a record."},
	})
	tests := []struct{ query, want string }{
		{"delete a record", "db__remove_record"},
		{"retrieve the record", "db__fetch_record"},
		{"get record", "db__fetch_record"},
	}
	for _, tc := range tests {
		if got := first(ix.Search(tc.query, "", 5)); got != tc.want {
			t.Errorf("Search(%q) first = %q, want %q", tc.query, got, tc.want)
		}
	}
}

func TestBigramsAndMentions(t *testing.T) {
	ix := mustNew(t, []Tool{
		{Name: "links__delete_link", Server: "links", Description: "Delete a short link."},
		{Name: "links__link_stats", Server: "links", Description: "Statistics of a link; delete old stats."},
		{Name: "todo__get_tasks", Server: "todo", Description: "Tasks of a project."},
		{Name: "todo__get_task_labels", Server: "todo", Description: "Labels of tasks of a project."},
	})
	tests := []struct{ query, want string }{
		// Both tools hold "delete" and "link"; only one says "delete link".
		{"delete the link", "links__delete_link"},
		// The request names the tool.
		{"labels of the tasks, using todo's get_tasks", "todo__get_tasks"},
		{"use GET_TASK_LABELS please", "todo__get_task_labels"},
	}
	for _, tc := range tests {
		if got := ix.Search(tc.query, "", 5); first(got) != tc.want {
			t.Errorf("Search(%q) = %v, want first %q", tc.query, names(got), tc.want)
		}
	}
	// A name said twice is boosted once.
	once, twice := ix.Search("get_tasks", "", 1), ix.Search("get_tasks, get_tasks", "", 1)
	if len(once) != 1 || len(twice) != 1 || once[0].Score != twice[0].Score {
		t.Errorf("get_tasks once %v, twice %v: want the same score", once, twice)
	}
	// A mentioned name respects the server filter.
	if got := ix.Search("get_tasks", "links", 5); len(got) != 0 {
		t.Errorf("mention leaked across servers: %v", names(got))
	}
}

func TestConcurrentSearch(t *testing.T) {
	ix := mustNew(t, wideTools(t))
	want := names(ix.Search("current weather", "", 5))
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if got := names(ix.Search("current weather", "", 5)); !reflect.DeepEqual(got, want) {
					t.Errorf("concurrent result %v, want %v", got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}
