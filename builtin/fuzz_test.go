package builtin

// Fuzz targets for every builtin server (issue 11): the fuzzer picks one of
// the server's tools and its arguments, which go through a real go-sdk
// client session over the in-memory transport, as the hub sends them.
//
//	go test -run '^$' -fuzz '^FuzzBuiltinText$' -fuzztime 1m ./builtin
//	scripts/fuzz.sh runs every target of the repository in turn.
//
// A run fails on a panic (the boundary turns it into an error, and logs it:
// the log is checked), on a call not answered within fuzzCallBound, on an
// answer that is neither a result with content nor a JSON-RPC error, and on
// a session that no longer answers a ping.
//
// Arguments are the fuzzer's raw bytes when they are valid JSON; otherwise
// they are built from the tool's live input schema, with the fuzzer's
// string, integer and float in every property of that type (and an enum
// property set to one of its values), so that mutations reach the parsers
// behind each argument rather than the JSON decoder only. Seed corpora: the
// f.Add calls below, and testdata/fuzz/FuzzBuiltinXxx/.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// fuzzCallBound is how long one call may take. Calls take well under a
// millisecond; the bound is generous for -race on a loaded machine.
const fuzzCallBound = 10 * time.Second

func FuzzBuiltinTime(f *testing.F) {
	fuzzBuiltin(f, "time", nil, map[string][]string{
		"current_time":    {`{}`, `{"timezone":"Asia/Kolkata"}`, `{"timezone":"../../etc/passwd"}`},
		"convert_time":    {`{"time":"2025-07-01 15:00","from_timezone":"Europe/Berlin","to_timezone":"America/New_York"}`, `{"time":"9999-12-31T23:59:59Z","to_timezone":"Pacific/Kiritimati"}`},
		"time_difference": {`{"start":"-9223372036854775808","end":"9223372036854775807"}`, `{"start":"0001-01-01","end":"9999-12-31"}`, `{"start":"2024-01-31","end":"2025-03-01 12:30","timezone":"Australia/Lord_Howe"}`},
		"add_duration":    {`{"time":"2025-01-31","duration":"1mo"}`, `{"duration":"99999999999999999999y"}`, `{"duration":"-1.5w2562047h"}`},
		"day_of_week":     {`{"date":"2024-02-29"}`, `{"date":"253402300799999"}`, `{"date":"tomorrow"}`},
	})
}

func FuzzBuiltinCalc(f *testing.F) {
	fuzzBuiltin(f, "calc", nil, map[string][]string{
		"evaluate":      {`{"expression":"(3 + 4) * 2^10 / sqrt(16)"}`, `{"expression":"2^2^2^2^2"}`, `{"expression":"round(1, 1e308) + fact(170)"}`, `{"expression":"min(1,2,3,4,5,6) % -0"}`},
		"convert_units": {`{"value":1e308,"from":"PB","to":"bit"}`, `{"value":-500,"from":"C","to":"K"}`, `{"value":5e-324,"from":"nm","to":"mi"}`},
		"percentage":    {`{"operation":"change","a":5e-324,"b":1e308}`, `{"operation":"what_percent","a":1,"b":0}`},
	})
}

func FuzzBuiltinText(f *testing.F) {
	fuzzBuiltin(f, "text", nil, map[string][]string{
		"slugify":       {`{"text":"a b","separator":"--","max_length":3}`, `{"text":"Héllo, Wörld! ť İ e\u0301","separator":"→","max_length":1}`},
		"change_case":   {`{"text":"parseJSONInput2Fast","case":"snake"}`, `{"text":"ǅ ß ﬁ İ","case":"title"}`},
		"encode":        {`{"text":"<a href=\"x\">&</a>","encoding":"html"}`, `{"text":"\u0000\ud800","encoding":"url"}`},
		"decode":        {`{"text":"////","encoding":"base64"}`, `{"text":"%zz","encoding":"url"}`, `{"text":"&#x110000;","encoding":"html"}`},
		"hash":          {`{"text":"abc","algorithm":"md5"}`},
		"generate_uuid": {`{"count":100}`, `{"count":-9223372036854775808}`},
		"text_stats":    {`{"text":"Hello world. How are you?\n\nFine!"}`},
	})
}

func FuzzBuiltinNotes(f *testing.F) {
	file := filepath.Join(f.TempDir(), "notes.json")
	fuzzBuiltin(f, "notes", map[string]string{"NOTES_FILE": file}, map[string][]string{
		"add_note":     {`{"title":"Groceries","body":"milk","tags":["Home","#home"," "]}`, `{"title":"x","tags":[""]}`},
		"list_notes":   {`{"limit":9223372036854775807}`, `{"tag":"#home"}`},
		"search_notes": {`{"query":"milk team","limit":-1}`, `{"query":"ß İ"}`},
		"read_note":    {`{"id":"note://1"}`, `{"id":"9223372036854775807"}`},
		"update_note":  {`{"id":"1","append_body":"more","tags":[]}`, `{"id":"1","title":" "}`},
		"delete_note":  {`{"id":"1"}`},
	})
}

// fuzzBuiltin runs the fuzz target for builtin name. seeds are argument
// JSON by tool name.
func fuzzBuiltin(f *testing.F, name string, env map[string]string, seeds map[string][]string) {
	rec := &logRecorder{}
	srv, err := New(name, env, Options{Logger: slog.New(rec)})
	if err != nil {
		f.Fatal(err)
	}
	cs := connectServer(f, srv, &mcp.ClientOptions{Logger: slog.New(slog.DiscardHandler)})
	var tools []*mcp.Tool
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			f.Fatal(err)
		}
		tools = append(tools, tool)
	}
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	for i, tool := range tools {
		if _, ok := seeds[tool.Name]; !ok {
			f.Fatalf("no seeds for %s.%s: every tool needs some", name, tool.Name)
		}
		for _, args := range seeds[tool.Name] {
			f.Add(uint8(i), []byte(args), "", int64(0), 0.0)
		}
		f.Add(uint8(i), []byte("not json"), "x", int64(1), 1.5)
	}
	f.Fuzz(func(t *testing.T, pick uint8, raw []byte, s string, n int64, x float64) {
		tool := tools[int(pick)%len(tools)]
		args := json.RawMessage(raw)
		if !json.Valid(raw) {
			args = schemaArgs(t, tool, s, n, x)
		}
		if file := env["NOTES_FILE"]; file != "" {
			if info, err := os.Stat(file); err == nil && info.Size() > 256<<10 {
				os.Remove(file) // keep each run's reads and writes small
			}
		}
		before := len(rec.panics())
		ctx, cancel := context.WithTimeout(context.Background(), fuzzCallBound)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: args})
		switch {
		case ctx.Err() != nil:
			t.Fatalf("%s.%s(%.200s) was not answered within %s", name, tool.Name, args, fuzzCallBound)
		case err != nil:
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) {
				t.Fatalf("%s.%s(%.200s): error %T is not a JSON-RPC error: %v", name, tool.Name, args, err, err)
			}
		case res == nil || len(res.Content) == 0:
			t.Fatalf("%s.%s(%.200s): a result without content: %+v", name, tool.Name, args, res)
		}
		if p := rec.panics(); len(p) > before {
			t.Fatalf("%s.%s(%.200s) panicked:\n%s", name, tool.Name, args, strings.Join(p[before:], "\n"))
		}
		if err := cs.Ping(ctx, nil); err != nil {
			t.Fatalf("%s.%s(%.200s) broke the session: ping: %v", name, tool.Name, args, err)
		}
	})
}

// schemaArgs builds arguments for tool from its input schema: s (split at
// NULs, one part per string property in turn), n and x go to the
// properties of their types; an enum property gets the value n picks.
func schemaArgs(t *testing.T, tool *mcp.Tool, s string, n int64, x float64) json.RawMessage {
	data, err := json.Marshal(tool.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(data, &schema); err != nil {
		t.Fatal(err)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		x = 0 // JSON has no NaN or infinity
	}
	parts := strings.Split(s, "\x00")
	names := make([]string, 0, len(schema.Properties))
	for name := range schema.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	args := map[string]any{}
	for i, name := range names {
		p := schema.Properties[name]
		if len(p.Enum) > 0 {
			args[name] = p.Enum[int(uint64(n)%uint64(len(p.Enum)))]
			continue
		}
		typ, _ := p.Type.(string)
		if types, ok := p.Type.([]any); ok && len(types) > 0 {
			typ, _ = types[0].(string)
		}
		switch typ {
		case "string":
			args[name] = parts[i%len(parts)]
		case "integer":
			args[name] = n
		case "number":
			args[name] = x
		case "boolean":
			args[name] = n%2 == 0
		case "array":
			args[name] = parts
		}
	}
	out, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
