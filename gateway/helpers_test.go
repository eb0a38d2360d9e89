package gateway

// Shared test helpers: in-process fixture servers (real go-sdk servers over
// in-memory transports, plugged in through Options.Builtin), programmatic
// configs, and a recording client session.

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

var quietLogger = slog.New(slog.DiscardHandler)

// builtins are package builtin's servers as cmd/mcp-hub hands them to the
// hub (which has no default): for tests whose configs have builtin: entries.
func builtins(cfg *config.Config, log *slog.Logger) func(string, map[string]string) (*mcp.Server, error) {
	return builtin.Maker(builtin.Options{Logger: log, MaxResultBytes: int(min(cfg.ResultLimit(), builtin.MaxResultFrame))})
}

// newTestHub starts a hub on cfg with fixture servers; it is closed when the test ends.
func newTestHub(t testing.TB, cfg *config.Config, fx *fixture.Servers) *Gateway {
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

// connectClient opens an in-memory session on h for toolset ("" for all
// tools) and waits until the hub has registered it.
func connectClient(t testing.TB, h *Gateway, toolset string) *mcp.ClientSession {
	t.Helper()
	before := h.hub.SessionCount()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "test"}, &mcp.ClientOptions{Logger: quietLogger})
	cs, err := h.hub.Connect(context.Background(), toolset, client)
	if err != nil {
		t.Fatalf("Connect(%q): %v", toolset, err)
	}
	t.Cleanup(func() { cs.Close() })
	waitFor(t, "hub registers the session", func() bool {
		return h.hub.SessionCount() > before
	})
	return cs
}

// waitFor polls cond for up to 30 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	fixture.Eventually(t, 30*time.Second, what, cond)
}
