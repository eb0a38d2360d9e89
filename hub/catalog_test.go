package hub

// Tests of catalog.go: which tools are deferred (item P2 of
// docs/search-tools.md), name collisions, allow and deny filters, and tool
// definitions passed on verbatim (or patched where the SDK needs it), in
// the upstream's key order.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

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

// TestCollisionAtStartup: two servers exposing the same name when the hub
// starts is a startup error naming both servers and the fix.
func TestCollisionAtStartup(t *testing.T) {
	cfg := fixture.Config(
		fixture.ServerEntry("one", fixture.WithPrefix("")),
		fixture.Entry("two", fixture.Stdio(t, "-name", "two", "-tools", "search,other"), fixture.WithPrefix("")),
	)
	_, _, err := agNew(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{
		"one": func() *mcp.Server { return fixture.EchoServer("one", "search") },
	})})
	if err == nil {
		t.Fatal("hub.New accepted a tool name collision")
	}
	msg := err.Error()
	for _, want := range []string{"'search'", "server 'one'", "server 'two'", "prefix"} {
		if !strings.Contains(msg, want) {
			t.Errorf("collision error %q does not mention %s", msg, want)
		}
	}
	if _, ok := err.(*config.Error); !ok {
		t.Errorf("collision error is %T, want *ConfigError (exit code 2)", err)
	}
	// Denying one of them resolves it.
	cfg.Servers["two"].Tools.Deny = []string{"search"}
	h, _, err := agNew(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{
		"one": func() *mcp.Server { return fixture.EchoServer("one", "search") },
	})})
	if err != nil {
		t.Fatalf("with the deny: %v", err)
	}
	if got := h.Catalog().Names(); !slices.Equal(got, []string{"search", "other"}) {
		t.Errorf("catalog = %v", got)
	}
}

// TestCollisionLater: a collision that appears after start-up (a server
// adds a tool) is logged and reported; the first server keeps the name.
func TestCollisionLater(t *testing.T) {
	t.Parallel()
	cfg := fixture.Config(
		fixture.ServerEntry("one", fixture.WithPrefix("")),
		fixture.Entry("two", fixture.Stdio(t, "-name", "two", "-tools", "other", "-add-tool-after", "300ms", "-add-tool", "search"), fixture.WithPrefix("")),
	)
	h, log := agHub(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{
		"one": func() *mcp.Server { return fixture.EchoServer("one", "search") },
	})})
	cs := fixture.Client(t, h, nil)
	log.WaitFor(t, "the collision to be logged", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "collision") && strings.Contains(s, "server 'two'")
	})
	// The catalog is published just after its problems are logged.
	waitFor(t, "the collision in the catalog's problems", func() bool {
		p := h.Catalog().Problems
		return len(p) > 0 && strings.Contains(p[0], "server 'one'")
	})
	if got := fixture.ResultText(fixture.CallTool(t, cs, "search", nil)); got != "one:search:{}" {
		t.Errorf("search -> %q, want the first server's", got)
	}
	if got := fixture.SortedToolNames(t, cs); !slices.Equal(got, []string{"other", "search"}) {
		t.Errorf("tools/list = %v", got)
	}
}

// TestCollisionLateJoiner: a server that joins late never takes over a
// name clients already call, even if it comes first in the config.
func TestCollisionLateJoiner(t *testing.T) {
	t.Parallel()
	cfg := fixture.Config(
		fixture.Entry("late", fixture.Stdio(t, "-name", "late", "-tools", "search,extra", "-start-delay", "3s"), fixture.WithPrefix("")),
		fixture.ServerEntry("early", fixture.WithPrefix("")),
	)
	h, log := agHub(t, cfg, Options{StartupWait: 200 * time.Millisecond, Builtin: fixture.Builtins(map[string]func() *mcp.Server{
		"early": func() *mcp.Server { return fixture.EchoServer("early", "search") },
	})})
	// Under load the in-process server may miss the 200ms start-up wait
	// too: the call below needs it listed, the late one still starting
	// (its 3s start delay is the margin).
	fixture.Eventually(t, 10*time.Second, "the early server's tool", func() bool {
		return slices.Contains(h.Catalog().Names(), "search")
	})
	cs := fixture.Client(t, h, nil)
	if got := fixture.ResultText(fixture.CallTool(t, cs, "search", nil)); got != "early:search:{}" {
		t.Fatalf("search -> %q", got)
	}
	log.WaitFor(t, "the late collision", 15*time.Second, func(s string) bool { return strings.Contains(s, "tool name collision") })
	fixture.Eventually(t, 30*time.Second, "the late server's other tool", func() bool {
		return slices.Equal(fixture.SortedToolNames(t, cs), []string{"extra", "search"})
	})
	if got := fixture.ResultText(fixture.CallTool(t, cs, "search", nil)); got != "early:search:{}" {
		t.Errorf("search -> %q after the late server joined; the name moved", got)
	}
	// Listing order is still config order.
	if got := h.Catalog().Names(); !slices.Equal(got, []string{"extra", "search"}) {
		t.Errorf("catalog order = %v", got)
	}
}

// TestFilters applies allow and deny lists (globs allowed) by original name.
func TestFilters(t *testing.T) {
	mk := func() *mcp.Server {
		return fixture.EchoServer("s", "read_file", "write_file", "delete_file", "list_dir", "stat")
	}
	cfg := fixture.Config(
		fixture.Entry("allow", config.Upstream{Builtin: "s"}, fixture.WithAllow("read_*", "list_dir", "stat")),
		fixture.Entry("deny", config.Upstream{Builtin: "s"}, fixture.WithDeny("delete_file", "write_*")),
		fixture.Entry("both", config.Upstream{Builtin: "s"}, fixture.WithAllow("*_file"), fixture.WithDeny("delete_file")),
	)
	h, _ := agHub(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{"s": mk})})
	cs := fixture.Client(t, h, nil)
	want := []string{
		"allow__list_dir", "allow__read_file", "allow__stat",
		"both__read_file", "both__write_file",
		"deny__list_dir", "deny__read_file", "deny__stat",
	}
	if got := fixture.SortedToolNames(t, cs); !slices.Equal(got, want) {
		t.Fatalf("tools/list = %v, want %v", got, want)
	}
	// A filtered tool cannot be called either.
	_, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: "deny__delete_file"})
	if err == nil || !strings.Contains(err.Error(), "Unknown tool 'deny__delete_file'") {
		t.Errorf("call of a denied tool: %v", err)
	}
}

// TestVerbatimSchemas: input and output schemas ($defs/$ref, draft 2020-12
// keywords), annotations, title, icons and _meta reach the client exactly as
// the upstream sent them; only the name changes.
func TestVerbatimSchemas(t *testing.T) {
	input := `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"$id": "urn:test:create",
		"type": "object",
		"$defs": {
			"label": {"type": "string", "minLength": 1, "pattern": "^[a-z]+$"},
			"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": false}
		},
		"properties": {
			"title": {"type": "string", "description": "Issue title", "default": "untitled"},
			"labels": {"type": "array", "items": {"$ref": "#/$defs/label"}, "uniqueItems": true, "maxItems": 5},
			"at": {"$ref": "#/$defs/point"},
			"kind": {"enum": ["bug", "feature"], "const": "bug"},
			"nested": {"type": ["object", "null"], "unevaluatedProperties": false,
				"dependentRequired": {"a": ["b"]}, "dependentSchemas": {"c": {"required": ["d"]}},
				"properties": {"a": {"type": "integer"}, "b": {"type": "integer", "exclusiveMinimum": 0}}},
			"choice": {"oneOf": [{"type": "string", "format": "email"}, {"type": "integer", "multipleOf": 3}]},
			"cond": {"if": {"type": "string"}, "then": {"maxLength": 3}, "else": {"type": "number"}},
			"big": {"type": "number", "examples": [1, 2.5], "x-custom": {"keep": true}}
		},
		"required": ["title"],
		"additionalProperties": false,
		"patternProperties": {"^x-": {"type": "string"}},
		"propertyNames": {"maxLength": 20}
	}`
	output := `{"type":"object","properties":{"id":{"type":"integer"},"url":{"type":"string","format":"uri"}},"required":["id"],"$defs":{"unused":{"type":"null"}}}`
	ro, destructive := true, false
	mk := func() *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "schemas", Version: "1"}, nil)
		s.AddTool(&mcp.Tool{
			Name:         "create",
			Title:        "Create an issue",
			Description:  "Create an issue.",
			InputSchema:  json.RawMessage(input),
			OutputSchema: json.RawMessage(output),
			Annotations:  &mcp.ToolAnnotations{Title: "Create", ReadOnlyHint: ro, DestructiveHint: &destructive, IdempotentHint: true},
			Meta:         mcp.Meta{"vendor/x": map[string]any{"a": 1}, "ui": "compact"},
			Icons:        []mcp.Icon{{Source: "https://example.com/i.png", MIMEType: "image/png"}},
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"id": 7}, Content: []mcp.Content{&mcp.TextContent{Text: `{"id":7}`}}}, nil
		})
		return s
	}
	// The stdio fixture passes the same input schema through -schema-file.
	schemaFile := filepath.Join(t.TempDir(), "schemas.json")
	if err := os.WriteFile(schemaFile, []byte(`{"create":`+input+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	httpURL := fixture.ServeHTTP(t, mk())
	cfg := fixture.Config(
		fixture.Entry("mem", config.Upstream{Builtin: "schemas"}),
		fixture.Entry("web", config.Upstream{URL: httpURL}),
		fixture.StdioEntry(t, "proc", "-tools", "create", "-schema-file", schemaFile),
	)
	h, _ := agHub(t, cfg, Options{Builtin: fixture.Builtins(map[string]func() *mcp.Server{"schemas": mk})})
	cs := fixture.Client(t, h, nil)
	res, err := cs.ListTools(fixture.Context(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		got[tool.Name] = tool
	}
	// What the upstream itself lists, straight from it.
	ct, st := mcp.NewInMemoryTransports()
	direct := mk()
	if _, err := direct.Connect(fixture.Context(t), st, nil); err != nil {
		t.Fatal(err)
	}
	dcs, err := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "0"}, nil).Connect(fixture.Context(t), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dcs.Close()
	dres, err := dcs.ListTools(fixture.Context(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := dres.Tools[0]
	for _, name := range []string{"mem__create", "web__create"} {
		tool := got[name]
		if tool == nil {
			t.Fatalf("%s not listed; got %v", name, fixture.SortedToolNames(t, cs))
		}
		copy := *tool
		copy.Name = want.Name
		fixture.SameJSON(t, name+" definition", &copy, want)
	}
	fixture.SameJSON(t, "proc__create inputSchema", got["proc__create"].InputSchema, json.RawMessage(input))
	// Structured output still validates against the verbatim output schema.
	out := fixture.CallTool(t, cs, "mem__create", map[string]any{"title": "x"})
	fixture.SameJSON(t, "structuredContent", out.StructuredContent, map[string]any{"id": 7})
}

// TestToolTypePatched: a schema whose top-level type is not exactly
// "object" (which the SDK refuses to serve) is served with type "object"
// and otherwise unchanged, rather than dropped or crashing the session.
func TestToolTypePatched(t *testing.T) {
	url := fixture.RawMCPServer(t, `[
		{"name":"notype","inputSchema":{"properties":{"a":{"type":"string"}}}},
		{"name":"nullable","inputSchema":{"type":["object","null"],"properties":{"b":{"type":"integer"}}}},
		{"name":"fine","inputSchema":{"type":"object","properties":{"c":{"type":"boolean"}},"x-extra":[1,2]}}
	]`)
	h, _ := agHub(t, fixture.Config(fixture.Entry("raw", config.Upstream{URL: url})), Options{})
	cs := fixture.Client(t, h, nil)
	res, err := cs.ListTools(fixture.Context(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tool := range res.Tools {
		got[tool.Name] = fixture.JSON(t, tool.InputSchema)
	}
	want := map[string]string{
		"raw__notype":   `{"properties":{"a":{"type":"string"}},"type":"object"}`,
		"raw__nullable": `{"properties":{"b":{"type":"integer"}},"type":"object"}`,
		"raw__fine":     `{"properties":{"c":{"type":"boolean"}},"type":"object","x-extra":[1,2]}`,
	}
	if len(got) != len(want) {
		t.Fatalf("tools/list = %v", got)
	}
	for name, w := range want {
		fixture.SameJSON(t, name, json.RawMessage(got[name]), json.RawMessage(w))
	}
	if text := fixture.ResultText(fixture.CallTool(t, cs, "raw__nullable", map[string]any{"b": 1})); text != `nullable:{"b":1}` {
		t.Errorf("raw__nullable -> %q", text)
	}
}

// TestSchemaKeyOrderKept: a schema reaches clients in the upstream's own key
// order (the go-sdk client would sort it), over stdio and streamable HTTP,
// and search_tools lists parameters in that order.
func TestSchemaKeyOrderKept(t *testing.T) {
	const schema = `{"type":"object","properties":{"zeta":{"type":"string","description":"last letter"},"alpha":{"type":"number"},"mid":{"type":"boolean"}},"required":["zeta"]}`
	path := filepath.Join(t.TempDir(), "schemas.json")
	if err := os.WriteFile(path, []byte(`{"order":`+schema+`}`), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-tools", "order", "-schema-file", path}
	cfg := fixture.RestartingConfig(
		fixture.StdioEntry(t, "stdio", args...),
		fixture.Entry("web", config.Upstream{URL: fixture.StartHTTP(t, append([]string{"-name", "web"}, args...)...)}))
	cfg.Discovery = config.Discovery{Enabled: true, DeferAll: true}
	h, _ := secHub(t, cfg)
	for _, name := range []string{"stdio__order", "web__order"} {
		tool, ok := h.Catalog().Tool(name)
		if !ok {
			t.Fatalf("%s not in the catalog", name)
		}
		if got := string(tool.Def.InputSchema.(json.RawMessage)); got != schema {
			t.Errorf("%s schema:\n got %s\nwant %s", name, got, schema)
		}
	}
	c := connectClient(t, h, "")
	text, _ := c.search(map[string]any{"tool_names": []string{"stdio__order"}})
	// The newly loaded tool's schema is given as the upstream wrote it.
	if !strings.Contains(text, "  Input schema: "+schema+"\n") {
		t.Errorf("schema not in the upstream's order:\n%s", text)
	}
}
