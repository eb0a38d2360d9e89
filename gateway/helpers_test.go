package gateway

// Shared test helpers: in-process fixture servers (real go-sdk servers over
// in-memory transports, plugged in through Options.Builtin), programmatic
// configs, and a recording client session.

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

var quietLogger = slog.New(slog.DiscardHandler)

// newTestHub starts a hub on cfg with fixture servers; it is closed when the test ends.
func newTestHub(t testing.TB, cfg *hub.Config, fx *fixture.Servers) *Gateway {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := New(ctx, cfg, Options{Hub: hub.Options{Logger: quietLogger, StartupWait: 20 * time.Second, Builtin: fx.Builtin}, OpenStore: openStore})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// testClient is a go-sdk client session connected to a hub in memory.
type testClient struct {
	t  testing.TB
	cs *mcp.ClientSession
}

// connectClient opens a session on h for toolset ("" for all tools) and
// waits until the hub has registered it.
func connectClient(t testing.TB, h *Gateway, toolset string) *testClient {
	t.Helper()
	c := &testClient{t: t}
	before := h.hub.SessionCount()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "test"}, &mcp.ClientOptions{Logger: quietLogger})
	cs, err := h.hub.Connect(context.Background(), toolset, client)
	if err != nil {
		t.Fatalf("Connect(%q): %v", toolset, err)
	}
	c.cs = cs
	t.Cleanup(func() { cs.Close() })
	waitFor(t, "hub registers the session", func() bool {
		return h.hub.SessionCount() > before
	})
	return c
}

// waitFor polls cond for up to 30 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	fixture.Eventually(t, 30*time.Second, what, cond)
}

// call calls a tool; a protocol error fails the test.
func (c *testClient) call(name string, args any) *mcp.CallToolResult {
	c.t.Helper()
	res, err := c.callErr(name, args)
	if err != nil {
		c.t.Fatalf("tools/call %s: %v", name, err)
	}
	return res
}

// callErr calls a tool and returns the protocol error, if any.
func (c *testClient) callErr(name string, args any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}
