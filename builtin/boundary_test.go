package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// boomServer is a builtin-shaped server whose handlers misbehave on
// purpose, behind the boundary New installs on every builtin: a tool, a
// resource, a prompt and a completion that panic, and a tool and a resource
// that answer more than the result limit.
func boomServer(rec *logRecorder, maxResult int) *mcp.Server {
	s := newServer("boom", "", &mcp.ServerOptions{
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			panic("completion secret-detail")
		},
	})
	type sizeIn struct {
		Bytes int `json:"bytes"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "panic"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		panic("tool secret-detail")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "nil_map"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		var m map[string]int
		m["x"] = 1 // a runtime error, not an explicit panic
		return nil, struct{}{}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ok"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return textResult("fine"), struct{}{}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sized"}, func(_ context.Context, _ *mcp.CallToolRequest, in sizeIn) (*mcp.CallToolResult, struct{}, error) {
		return textResult("%s", strings.Repeat("x", in.Bytes)), struct{}{}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{Name: "boom", URITemplate: "boom://{x}"}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if req.Params.URI == "boom://big" {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: strings.Repeat("x", 2*maxResult)}}}, nil
		}
		panic("resource secret-detail")
	})
	s.AddPrompt(&mcp.Prompt{Name: "boom"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		panic("prompt secret-detail")
	})
	guard(s, "boom", Options{Logger: slog.New(rec), MaxResultBytes: maxResult}.withDefaults())
	return s
}

// TestBoundary: a panic or an oversized result fails that one request with
// a clear error (isError for tools, -32603 otherwise), is logged once with
// its stack (panics), tells the client nothing of the panic, and leaves the
// server and both of its sessions working.
func TestBoundary(t *testing.T) {
	const limit = 1 << 10
	rec := &logRecorder{}
	srv := boomServer(rec, limit)
	a, b := connectServer(t, srv, nil), connectServer(t, srv, nil)
	ctx := context.Background()

	for _, tc := range []struct {
		name      string
		do        func() (*mcp.CallToolResult, error)
		wantTool  string // isError text must contain it; "" means a JSON-RPC -32603 error
		wantPanic bool
	}{
		{"tool panic", func() (*mcp.CallToolResult, error) {
			return a.CallTool(ctx, &mcp.CallToolParams{Name: "panic"})
		}, "tool 'boom.panic'", true},
		{"tool runtime error", func() (*mcp.CallToolResult, error) {
			return a.CallTool(ctx, &mcp.CallToolParams{Name: "nil_map"})
		}, "tool 'boom.nil_map'", true},
		{"resource panic", func() (*mcp.CallToolResult, error) {
			_, err := a.ReadResource(ctx, &mcp.ReadResourceParams{URI: "boom://x"})
			return nil, err
		}, "", true},
		{"prompt panic", func() (*mcp.CallToolResult, error) {
			_, err := a.GetPrompt(ctx, &mcp.GetPromptParams{Name: "boom"})
			return nil, err
		}, "", true},
		{"completion panic", func() (*mcp.CallToolResult, error) {
			_, err := a.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "boom"}, Argument: mcp.CompleteParamsArgument{Name: "a"}})
			return nil, err
		}, "", true},
		{"tool result over the limit", func() (*mcp.CallToolResult, error) {
			return a.CallTool(ctx, &mcp.CallToolParams{Name: "sized", Arguments: map[string]any{"bytes": 2 * limit}})
		}, "over the 1 KiB limit on one result (max_result_bytes)", false},
		{"resource over the limit", func() (*mcp.CallToolResult, error) {
			_, err := a.ReadResource(ctx, &mcp.ReadResourceParams{URI: "boom://big"})
			return nil, err
		}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(rec.panics())
			res, err := tc.do()
			if tc.wantTool != "" {
				if err != nil || res == nil || !res.IsError {
					t.Fatalf("got %+v, %v; want an isError result", res, err)
				}
				text := res.Content[0].(*mcp.TextContent).Text
				if !strings.Contains(text, tc.wantTool) || strings.Contains(text, "secret-detail") {
					t.Errorf("error text %q: want it to contain %q and nothing of the panic", text, tc.wantTool)
				}
			} else {
				var rpc *jsonrpc.Error
				if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInternalError {
					t.Fatalf("got %+v, %v; want JSON-RPC error %d", res, err, jsonrpc.CodeInternalError)
				}
				if strings.Contains(rpc.Message, "secret-detail") {
					t.Errorf("error %q tells the client what panicked", rpc.Message)
				}
			}
			logged := rec.panics()[before:]
			switch {
			case tc.wantPanic && len(logged) != 1:
				t.Errorf("logged %d panic records, want 1: %q", len(logged), logged)
			case tc.wantPanic && (!strings.Contains(logged[0], "secret-detail") && !strings.Contains(logged[0], "nil map") || !strings.Contains(logged[0], "boundary_test.go")):
				t.Errorf("panic record lacks the panic value or the stack: %s", logged[0])
			case !tc.wantPanic && len(logged) != 0:
				t.Errorf("logged a panic for a result that was only too large: %q", logged)
			}
			// The server, this session and the other one go on.
			for name, cs := range map[string]*mcp.ClientSession{"same": a, "other": b} {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ok"})
				if err != nil || res.IsError {
					t.Fatalf("%s session after %s: %+v, %v", name, tc.name, res, err)
				}
			}
		})
	}
	if res, err := a.CallTool(ctx, &mcp.CallToolParams{Name: "sized", Arguments: map[string]any{"bytes": limit / 2}}); err != nil || res.IsError {
		t.Errorf("a result under the limit: %+v, %v", res, err)
	}
}

// TestBoundaryFrameLimit: a configured limit above the in-memory
// transport's frame applies as MaxResultFrame, so a result between the two
// fails the call, not the connection.
func TestBoundaryFrameLimit(t *testing.T) {
	if got := (Options{MaxResultBytes: 1 << 30}).withDefaults().MaxResultBytes; got != MaxResultFrame {
		t.Fatalf("MaxResultBytes 1 GiB became %d, want MaxResultFrame %d", got, MaxResultFrame)
	}
	rec := &logRecorder{}
	srv := boomServer(rec, 1<<30)
	cs := connectServer(t, srv, nil)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sized", Arguments: map[string]any{"bytes": 17 << 20}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "over the 15.9 MiB limit") {
		t.Fatalf("a 17 MiB result: %v, %v", res, err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ok"}); err != nil || res.IsError {
		t.Fatalf("the next call: %+v, %v", res, err)
	}
}

// TestEncodedSize: the boundary's count of a result's size never falls
// short of encoding/json's, and exceeds it by little.
func TestEncodedSize(t *testing.T) {
	for _, text := range []string{"", "plain", `<a href="x">&</a>`, "\x00\x01\n\t\"\\", "é\u2028\u2029🚀", "\xff\xfe bad", strings.Repeat("<&>", 1000)} {
		for _, structured := range []any{nil, json.RawMessage(`{"result":` + string(mustMarshal(t, text)) + `}`)} {
			res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}, &mcp.TextContent{Text: text + "x"}}, StructuredContent: structured}
			data, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := encodedSize(res)
			if !ok || got < len(data) || got > len(data)+512 {
				t.Errorf("encodedSize(%q, %v) = %d, %v; encoding/json writes %d bytes", text, structured != nil, got, ok, len(data))
			}
		}
		if n := jsonStringLen(text); n != len(mustMarshal(t, text)) {
			t.Errorf("jsonStringLen(%q) = %d, want %d", text, n, len(mustMarshal(t, text)))
		}
	}
	if _, ok := encodedSize(&mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: []byte("x")}}}); ok {
		t.Error("encodedSize counts image content; it should leave it to encoding")
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
