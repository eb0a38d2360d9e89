package chatloop

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// testHub is a real go-sdk MCP server standing in for the hub: an eager
// set of tools, a search_tools that loads a deferred tool with
// server.AddTool (which sends list_changed, as the hub does), a tool that
// fails, one that returns an image and one that blocks until cancelled.
type testHub struct {
	t      *testing.T
	server *mcp.Server

	mu    sync.Mutex
	calls map[string]int
	// cancelled is closed when slow__wait sees its context cancelled,
	// started when it begins.
	started, cancelled chan struct{}
	// barrier makes par__one and par__two wait for each other: run one
	// after the other they time out.
	barrier sync.WaitGroup
}

var pngBytes = []byte("\x89PNG\r\n\x1a\nfake-image")

func objSchema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	if len(required) == 0 {
		req = []byte("[]")
	}
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{%s},"required":%s}`, props, req))
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func newTestHub(t *testing.T) *testHub {
	h := &testHub{t: t, calls: map[string]int{}, started: make(chan struct{}), cancelled: make(chan struct{})}
	h.barrier.Add(2)
	h.server = mcp.NewServer(&mcp.Implementation{Name: "testhub", Version: "1"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
	})
	add := func(name, desc string, schema json.RawMessage, fn func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error)) {
		h.server.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h.mu.Lock()
			h.calls[name]++
			h.mu.Unlock()
			args := map[string]any{}
			if len(req.Params.Arguments) > 0 {
				if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
					return nil, err
				}
			}
			return fn(ctx, args)
		})
	}
	add("search_tools", "Search for and load deferred tools.", objSchema(`"query":{"type":"string"}`), func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
		add("weather__get_forecast", "Get weather forecast for a location.", objSchema(`"location":{"type":"string"}`, "location"), func(ctx context.Context, args map[string]any) (*mcp.CallToolResult, error) {
			return text(fmt.Sprintf("Sunny in %v", args["location"])), nil
		})
		return text("Found 1 tool(s):\n  [weather] weather__get_forecast: Get weather forecast for a location."), nil
	})
	add("clock__now", "Get the current time.", objSchema(``), func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return text("12:00"), nil
	})
	add("math__add", "Add two numbers.", objSchema(`"a":{"type":"number"},"b":{"type":"number"}`, "a", "b"), func(_ context.Context, a map[string]any) (*mcp.CallToolResult, error) {
		x, _ := a["a"].(float64)
		y, _ := a["b"].(float64)
		return text(fmt.Sprint(x + y)), nil
	})
	// notes__delete changes things: its annotations say so.
	h.server.AddTool(&mcp.Tool{Name: "notes__delete", Description: "Delete a note.", InputSchema: objSchema(`"id":{"type":"string"}`, "id"),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h.mu.Lock()
			h.calls["notes__delete"]++
			h.mu.Unlock()
			return text("deleted"), nil
		})
	add("fail__boom", "Always fails.", objSchema(``), func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "Error: boom"}}}, nil
	})
	add("img__chart", "Draw a chart.", objSchema(``), func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "chart:"},
			&mcp.ImageContent{MIMEType: "image/png", Data: pngBytes},
		}}, nil
	})
	par := func(name string, delay time.Duration) {
		add(name, "Waits for its sibling.", objSchema(``), func(context.Context, map[string]any) (*mcp.CallToolResult, error) {
			h.barrier.Done()
			done := make(chan struct{})
			go func() { h.barrier.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				return text(name + ": timeout, not run in parallel"), nil
			}
			time.Sleep(delay)
			return text(name), nil
		})
	}
	// par__one finishes last, so call order differs from finishing order.
	par("par__one", 50*time.Millisecond)
	par("par__two", 0)
	add("slow__wait", "Waits until cancelled.", objSchema(``), func(ctx context.Context, _ map[string]any) (*mcp.CallToolResult, error) {
		close(h.started)
		select {
		case <-ctx.Done():
			close(h.cancelled)
			return nil, ctx.Err()
		case <-time.After(10 * time.Second):
			return text("slow done"), nil
		}
	})
	return h
}

func (h *testHub) callCount(name string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[name]
}

// Connect is the hub's Connect for this server: a real MCP session over
// in-memory transports.
func (h *testHub) Connect(ctx context.Context, toolset string, client *mcp.Client) (*mcp.ClientSession, error) {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := h.server.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	h.t.Cleanup(func() { ss.Close() })
	return client.Connect(ctx, ct, nil)
}

// ServerOf answers as the hub would if server "calculator" had prefix
// "math": stats must take the hub's word, not split the name.
func (h *testHub) ServerOf(tool string) (string, bool) {
	if tool == "math__add" {
		return "calculator", true
	}
	server, _, ok := strings.Cut(tool, "__")
	return server, ok
}

// PrincipalOf is who asPrincipal said the request is from.
func (h *testHub) PrincipalOf(ctx context.Context) string {
	p, _ := ctx.Value(principalKey{}).(string)
	return p
}

type principalKey struct{}

// asPrincipal stands in for the hub's auth in front of the HTTP API: the
// X-Test-Principal header names who the request is from.
func asPrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, r.Header.Get("X-Test-Principal"))))
	})
}

func (h *testHub) dial(t *testing.T) *Session {
	t.Helper()
	s, err := Dial(context.Background(), h, "", testLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// initialTools is what tools/list shows before any search, sorted.
var initialTools = []string{"clock__now", "fail__boom", "img__chart", "math__add", "notes__delete", "par__one", "par__two", "search_tools", "slow__wait"}
