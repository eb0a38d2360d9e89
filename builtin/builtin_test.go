package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// connect starts the named builtin and returns a go-sdk client session to it
// over in-memory transports, exactly as the hub connects to builtins.
func connect(t *testing.T, name string, env map[string]string) (*mcp.ClientSession, *mcp.Server) {
	t.Helper()
	return connectOpts(t, name, env, nil)
}

// connectOpts is connect with client options. The server logs to a
// recorder, and the test fails if any handler panicked: the boundary keeps
// a panic from crashing anything, so only its log shows it.
func connectOpts(t *testing.T, name string, env map[string]string, opts *mcp.ClientOptions) (*mcp.ClientSession, *mcp.Server) {
	t.Helper()
	rec := &logRecorder{}
	t.Cleanup(func() {
		if p := rec.panics(); len(p) > 0 {
			t.Errorf("builtin %s panicked:\n%s", name, strings.Join(p, "\n"))
		}
	})
	srv, err := New(name, env, Options{Logger: slog.New(rec)})
	if err != nil {
		t.Fatalf("New(%q): %v", name, err)
	}
	return connectServer(t, srv, opts), srv
}

// connectServer opens a client session to srv over in-memory transports.
func connectServer(t testing.TB, srv *mcp.Server, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	t.Cleanup(func() { ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, opts)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// logRecorder is a slog.Handler that keeps every record, for tests that
// check what a server logged.
type logRecorder struct {
	mu      sync.Mutex
	records []string // message and attributes, one line each
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logRecorder) WithGroup(string) slog.Handler            { return l }

func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s=%q", a.Key, a.Value.String())
		return true
	})
	l.mu.Lock()
	defer l.mu.Unlock()
	l.records = append(l.records, b.String())
	return nil
}

// panics returns the records of panics the boundary caught.
func (l *logRecorder) panics() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if strings.Contains(r, "panicked") {
			out = append(out, r)
		}
	}
	return out
}

// call invokes a tool and returns its text and structured content.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) (text string, structured map[string]any, isError bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool %s: protocol error: %v", tool, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(data, &structured)
	}
	return b.String(), structured, res.IsError
}

func TestRegistry(t *testing.T) {
	names := Names()
	want := []string{"calc", "notes", "text", "time"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("Names() = %v, want %v", names, want)
	}
	for _, n := range names {
		if Describe(n) == "" {
			t.Errorf("Describe(%q) is empty", n)
		}
	}
	if Describe("nope") != "" {
		t.Errorf("Describe of unknown builtin should be empty")
	}
	_, err := New("nope", nil, Options{})
	if err == nil || !strings.Contains(err.Error(), "calc, notes, text, time") {
		t.Fatalf("New(unknown) error = %v, want one listing the available names", err)
	}
}

// TestToolsListed checks every builtin serves a well-formed tool list: each
// tool has a description and an object input schema whose properties are
// described (the hub's search indexes them).
func TestToolsListed(t *testing.T) {
	want := map[string][]string{
		"time":  {"add_duration", "convert_time", "current_time", "day_of_week", "time_difference"},
		"calc":  {"convert_units", "evaluate", "percentage"},
		"notes": {"add_note", "delete_note", "list_notes", "read_note", "search_notes", "update_note"},
		"text":  {"change_case", "decode", "encode", "generate_uuid", "hash", "slugify", "text_stats"},
	}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			cs, _ := connect(t, name, map[string]string{"NOTES_FILE": filepath.Join(t.TempDir(), "n.json")})
			if got := cs.InitializeResult().ServerInfo.Name; got != name {
				t.Errorf("serverInfo.name = %q, want %q", got, name)
			}
			var got []string
			for tool, err := range cs.Tools(context.Background(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, tool.Name)
				if len(tool.Description) < 30 {
					t.Errorf("%s: description too short: %q", tool.Name, tool.Description)
				}
				schema, _ := json.Marshal(tool.InputSchema)
				var s struct {
					Type       string                     `json:"type"`
					Properties map[string]json.RawMessage `json:"properties"`
				}
				if err := json.Unmarshal(schema, &s); err != nil || s.Type != "object" {
					t.Errorf("%s: input schema %s is not an object schema", tool.Name, schema)
				}
				for p, ps := range s.Properties {
					if !strings.Contains(string(ps), `"description"`) {
						t.Errorf("%s: parameter %s has no description", tool.Name, p)
					}
				}
			}
			if strings.Join(sortedCopy(got), ",") != strings.Join(want[name], ",") {
				t.Errorf("tools = %v, want %v", got, want[name])
			}
		})
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := range c {
		for j := i + 1; j < len(c); j++ {
			if c[j] < c[i] {
				c[i], c[j] = c[j], c[i]
			}
		}
	}
	return c
}

// toolCase is one table-driven tool call.
type toolCase struct {
	name    string
	tool    string
	args    map[string]any
	wantErr string            // substring of the error text, if an error is expected
	text    []string          // substrings of the text content
	fields  map[string]string // structured field -> JSON encoding of the expected value
}

func runToolCases(t *testing.T, cs *mcp.ClientSession, cases []toolCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text, sc, isErr := call(t, cs, tc.tool, tc.args)
			if tc.wantErr != "" {
				if !isErr || !strings.Contains(text, tc.wantErr) {
					t.Fatalf("got isError=%v text %q, want error containing %q", isErr, text, tc.wantErr)
				}
				return
			}
			if isErr {
				t.Fatalf("unexpected tool error: %s", text)
			}
			for _, s := range tc.text {
				if !strings.Contains(text, s) {
					t.Errorf("text %q does not contain %q", text, s)
				}
			}
			for k, want := range tc.fields {
				got, _ := json.Marshal(lookupPath(sc, k))
				if string(got) != want {
					t.Errorf("structured %s = %s, want %s (all: %v)", k, got, want, sc)
				}
			}
		})
	}
}

// lookupPath reads a dotted path ("target.time") from decoded JSON.
func lookupPath(m map[string]any, path string) any {
	var v any = m
	for _, p := range strings.Split(path, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[p]
	}
	return v
}
