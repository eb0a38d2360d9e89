package hub

// Tests of naming.go: the exposed-name rule, prefixes, and the name length
// limit.

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

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

// TestNamingPrefixes covers the default prefix, a custom one, prefix "",
// sanitising, and the 64-character rule with a stable hash suffix: cut
// names stay distinct and callable.
func TestNamingPrefixes(t *testing.T) {
	long1 := strings.Repeat("very_long_tool_name_", 4) + "one"
	long2 := strings.Repeat("very_long_tool_name_", 4) + "two"
	cfg := fixture.Config(
		fixture.ServerEntry("alpha"),
		fixture.ServerEntry("beta", fixture.WithPrefix("b")),
		fixture.ServerEntry("gamma", fixture.WithPrefix("")),
	)
	h, _ := agHub(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{
		"alpha": func() *mcp.Server { return fixture.EchoServer("alpha", "search", "dotted.name", long1, long2) },
		"beta":  func() *mcp.Server { return fixture.EchoServer("beta", "search") },
		"gamma": func() *mcp.Server { return fixture.EchoServer("gamma", "plain") },
	})})
	cs := fixture.Client(t, h, nil)
	cut1, cut2 := ExposedName("alpha", long1), ExposedName("alpha", long2)
	want := []string{"alpha__dotted_name", "alpha__search", "b__search", "plain", cut1, cut2}
	slices.Sort(want)
	if got := fixture.SortedToolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v, want %v", got, want)
	}
	for _, cut := range []string{cut1, cut2} {
		if len(cut) != config.MaxNameLength {
			t.Errorf("%s: %d characters, want %d", cut, len(cut), config.MaxNameLength)
		}
		if !strings.HasPrefix(cut, "alpha__very_long_tool_name_") {
			t.Errorf("%s does not keep the start of the name", cut)
		}
	}
	if cut1 == cut2 {
		t.Fatalf("two long names share an exposed name %s", cut1)
	}
	if again := ExposedName("alpha", long1); again != cut1 {
		t.Errorf("ExposedName is not stable: %s then %s", cut1, again)
	}
	// Calls go to the original names.
	for name, text := range map[string]string{
		cut1:                 "alpha:" + long1 + ":{}",
		cut2:                 "alpha:" + long2 + ":{}",
		"alpha__dotted_name": "alpha:dotted.name:{}",
		"b__search":          "beta:search:{}",
		"plain":              "gamma:plain:{}",
	} {
		if got := fixture.ResultText(fixture.CallTool(t, cs, name, nil)); got != text {
			t.Errorf("%s -> %q, want %q", name, got, text)
		}
	}
	tool, ok := h.Catalog().Tool(cut1)
	if !ok || tool.Server != "alpha" || tool.Original != long1 {
		t.Errorf("catalog entry for %s = %+v", cut1, tool)
	}
	// The chat's stats ask the hub, not the name, which server a tool is from.
	for name, want := range map[string]string{"b__search": "beta", "plain": "gamma", cut2: "alpha", "nope": ""} {
		if got, ok := h.ServerOf(name); got != want || ok != (want != "") {
			t.Errorf("ServerOf(%q) = %q, %v; want %q", name, got, ok, want)
		}
	}
}

func TestExposedName(t *testing.T) {
	for _, tc := range []struct{ prefix, name, want string }{
		{"github", "create_issue", "github__create_issue"},
		{"", "create_issue", "create_issue"},
		{"my server", "a.b/c:d", "my_server__a_b_c_d"},
		{"x", "ünï", "x___n_"},
	} {
		if got := ExposedName(tc.prefix, tc.name); got != tc.want {
			t.Errorf("ExposedName(%q, %q) = %q, want %q", tc.prefix, tc.name, got, tc.want)
		}
	}
	exact := strings.Repeat("a", config.MaxNameLength-len("p__"))
	if got := ExposedName("p", exact); got != "p__"+exact {
		t.Errorf("a name of exactly 64 characters was changed: %s", got)
	}
	over := ExposedName("p", exact+"b")
	if len(over) != config.MaxNameLength || over == "p__"+exact[:len(exact)-1] {
		t.Errorf("65 characters -> %q", over)
	}
	for _, c := range over {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == 'p') {
			t.Errorf("%q has character %q", over, c)
		}
	}
}

// TestNameLimit: with max_name_length (Cursor's 60 less its entry name, or
// any limit in range), or serve's override, every name a client sees (tools,
// prompts, meta-tools) fits, the cut names are the same on the next start,
// and calls still reach the original tools.
func TestNameLimit(t *testing.T) {
	t.Parallel()
	const server = "a-rather-long-server-name"
	tools := []string{
		"short",
		strings.Repeat("x", 30),
		"create_or_update_file_contents_in_repository",
		"create_or_update_file_contents_in_repository_branch",
		strings.Repeat("very_long_tool_name_", 4),
	}
	upstreamServer := func() *mcp.Server {
		s := fixture.EchoServer(server, tools...)
		s.AddPrompt(&mcp.Prompt{Name: "summarise_the_pull_request_and_its_review_comments"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
		return s
	}
	for _, tc := range []struct {
		name            string
		config, options int
		want            int
	}{
		{"default", 0, 0, config.MaxNameLength},
		{"cursor, entry hub", 57, 0, 57},
		{"cursor 60", 60, 0, 60},
		{"least", config.MinNameLength, 0, config.MinNameLength},
		{"serve override", 60, 40, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := func() ([]string, *mcp.ClientSession) {
				cfg := fixture.Config(fixture.Entry(server, config.Upstream{Builtin: "up"}))
				cfg.MaxNameLength = tc.config
				cfg.Discovery = config.Discovery{Enabled: true, DeferAll: true, AutoLoadOnCall: true}
				h, _ := agHub(t, cfg, Options{MaxNameLength: tc.options, Builtin: fixture.Builtins(map[string]func() *mcp.Server{"up": upstreamServer})})
				cs := fixture.Client(t, h, nil)
				names := h.Catalog().Names()
				for _, p := range h.Catalog().Prompts {
					names = append(names, p.Name)
				}
				names = append(names, fixture.SortedToolNames(t, cs)...) // the meta-tools
				slices.Sort(names)
				return names, cs
			}
			first, cs := start()
			if len(first) != len(tools)+1+2 {
				t.Fatalf("names = %v: want %d tools, a prompt and the two meta-tools", first, len(tools))
			}
			for _, n := range first {
				if len(n) > tc.want {
					t.Errorf("%s: %d characters, over the limit %d", n, len(n), tc.want)
				}
			}
			again, _ := start()
			if !slices.Equal(first, again) {
				t.Errorf("names changed across a restart:\n%v\n%v", first, again)
			}
			long := exposedName(server, tools[len(tools)-1], tc.want)
			if got := fixture.ResultText(fixture.CallTool(t, cs, long, nil)); got != server+":"+tools[len(tools)-1]+":{}" {
				t.Errorf("%s -> %q", long, got)
			}
		})
	}
}
