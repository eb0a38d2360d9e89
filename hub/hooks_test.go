package hub

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// hookRecorder records, in order, what the hub told its hooks and two
// stacked CallTraces (as "outer:" and "inner:").
type hookRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *hookRecorder) add(e string) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *hookRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// trace is a CallTrace whose hooks record under name; its UpstreamStart
// puts a mark in _meta and the context, which UpstreamDone must find.
func (r *hookRecorder) trace(name string) *CallTrace {
	type mark struct{}
	return &CallTrace{
		MetaToolCall: func(_ context.Context, tool string) { r.add(name + ":meta " + tool) },
		SearchDone:   func(_ context.Context, loaded int) { r.add(name + ":search " + string(rune('0'+loaded))) },
		Refused:      func(context.Context) { r.add(name + ":refused") },
		UpstreamStart: func(ctx context.Context, u *UpstreamRequest) context.Context {
			if *u.Meta == nil {
				*u.Meta = mcp.Meta{}
			}
			(*u.Meta)["x-"+name] = "1"
			r.add(name + ":start " + u.Method + " " + u.Server)
			return context.WithValue(ctx, mark{}, name)
		},
		UpstreamDone: func(ctx context.Context, u *UpstreamRequest, _ mcp.Result, err error) {
			if ctx.Value(mark{}) == nil || u.Start.IsZero() || (u.Tool == nil) != (u.Method != "tools/call") {
				r.add(name + ":done without its start")
				return
			}
			r.add(name + ":done " + u.Method)
		},
	}
}

// TestHooksAndCallTraces: the seams the gateway is built on. Hooks hear of
// a session's creation, start, loaded tools and end, and of new catalogs;
// CallTraces stacked in a request's context each hear, innermost first, of
// a meta-tool call, a search and what it loaded, a refused call, and each
// request sent upstream with the context and _meta their UpstreamStart
// made. The session's stats are one more subscriber.
func TestHooksAndCallTraces(t *testing.T) {
	rec := &hookRecorder{}
	var catalogs sync.WaitGroup
	catalogs.Add(1)
	var once sync.Once
	hooks := Hooks{
		Observe: func(s *Session) mcp.Middleware {
			rec.add("created")
			return func(next mcp.MethodHandler) mcp.MethodHandler {
				return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
					if method != "tools/call" {
						return next(ctx, method, req)
					}
					ctx = WithCallTrace(WithCallTrace(ctx, rec.trace("outer")), rec.trace("inner"))
					return next(ctx, method, req)
				}
			}
		},
		SessionStarted: func(*Session) { rec.add("started") },
		SessionEnded:   func(*Session) { rec.add("ended") },
		ToolsLoaded:    func(_ *Session, added []string) { rec.add("loaded " + added[0]) },
		CatalogSwapped: func(*Catalog) { once.Do(catalogs.Done) },
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := New(ctx, fixture.SmallConfig(), Options{Logger: quietLogger, StartupWait: 20 * time.Second, Builtin: fixture.NewServers().Builtin, Hooks: hooks})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer h.Close()
	catalogs.Wait() // New's first catalog

	c := connectClient(t, h, "")
	c.search(map[string]any{"tool_names": []string{"math__add"}})
	c.call("math__add", map[string]any{"a": 1, "b": 2})
	c.call(SearchToolsName, map[string]any{})
	c.cs.Close()
	waitFor(t, "the session's end", func() bool { return slices.Contains(rec.seen(), "ended") })

	want := []string{
		"created", "started",
		"inner:meta search_tools", "outer:meta search_tools",
		"loaded math__add",
		"inner:search 1", "outer:search 1",
		"inner:start tools/call math", "outer:start tools/call math",
		"inner:done tools/call", "outer:done tools/call",
		"inner:meta search_tools", "outer:meta search_tools",
		"inner:refused", "outer:refused",
		"ended",
	}
	if got := rec.seen(); !slices.Equal(got, want) {
		t.Errorf("events:\n got %q\nwant %q", got, want)
	}
	infos := h.Sessions(nil)
	if len(infos) != 0 {
		t.Errorf("sessions after the end: %+v", infos)
	}
}

func TestIsToolError(t *testing.T) {
	tests := []struct {
		res  mcp.Result
		want bool
	}{
		{&upstream.RawResult{JSON: json.RawMessage(`{"content":[],"isError":true}`)}, true},
		{&upstream.RawResult{JSON: json.RawMessage(`{"content":[],"isError":false}`)}, false},
		{&upstream.RawResult{JSON: json.RawMessage(`{"content":[],"structuredContent":{"isError":true}}`)}, false},
		{&upstream.RawResult{JSON: json.RawMessage(`{"content":[{"type":"text","text":"\"isError\":true"}]}`)}, false},
		{&mcp.CallToolResult{IsError: true}, true},
		{nil, false},
	}
	for _, tc := range tests {
		if got := IsToolError(tc.res); got != tc.want {
			t.Errorf("IsToolError(%v) = %v, want %v", tc.res, got, tc.want)
		}
	}
}
