package gateway

// Helpers of the team-deployment tests (metrics, tracing, audit, auth): a
// builtin upstream "gw" whose tools give every call outcome, and a hub
// served over real HTTP on 127.0.0.1. Prefixed "gw" so they never clash
// with other test files of the package.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/hub"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// gwUpstream records what the "gw" builtin server received.
type gwUpstream struct {
	mu    sync.Mutex
	metas []map[string]any // _meta of each call to "meta"
}

// builtin serves "gw" and falls back to the spec fixtures for other names.
func (g *gwUpstream) builtin(fx *fixture.Servers) func(string, map[string]string) (*mcp.Server, error) {
	return func(name string, env map[string]string) (*mcp.Server, error) {
		if name != "gw" {
			return fx.Builtin(name, env)
		}
		return g.server(), nil
	}
}

// server has a tool per outcome: ok, fail (isError), broken (a JSON-RPC
// error), slow (answers only when cancelled: a timeout), and meta (returns
// its request's _meta).
func (g *gwUpstream) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "gw", Version: "test"}, nil)
	obj := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "ok", Description: "Answers ok.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("ok"), nil
	})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Answers with a tool error.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("it failed")
		r.IsError = true
		return r, nil
	})
	s.AddTool(&mcp.Tool{Name: "broken", Description: "Answers with a JSON-RPC error.", InputSchema: obj}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "broken on purpose"}
	})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Never answers before it is cancelled.", InputSchema: obj}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	s.AddTool(&mcp.Tool{Name: "meta", Description: "Returns the _meta it received.", InputSchema: obj}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		g.mu.Lock()
		g.metas = append(g.metas, req.Params.Meta)
		g.mu.Unlock()
		b, _ := json.Marshal(req.Params.Meta)
		return text(string(b)), nil
	})
	return s
}

// gwConfig is a config with "gw" (eager, a short timeout) and the spec's
// weather server (deferred), discovery on.
func gwConfig() *config.Config {
	gw := fixture.ServerEntry("gw", fixture.DeferLoading(false))
	gw.Timeout = config.Duration(time.Second)
	return fixture.NewConfig(config.Discovery{Enabled: true}, gw, fixture.ServerEntry("weather", fixture.DeferLoading(true)))
}

// gwHub starts a hub on cfg with the gw and fixture upstreams and serves it
// over HTTP on 127.0.0.1; it returns the hub, its base URL and its log.
func gwHub(t testing.TB, cfg *config.Config, g *gwUpstream) (*Gateway, string, *fixture.Log) {
	t.Helper()
	lg := &fixture.Log{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := New(ctx, cfg, Options{Hub: hub.Options{Logger: slog.New(slog.NewTextHandler(lg, nil)), StartupWait: 20 * time.Second, Builtin: g.builtin(fixture.NewServers())}, OpenStore: openStore})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(h.HTTPHandler(nil))
	t.Cleanup(func() {
		srv.Close()
		h.Close()
		if t.Failed() {
			t.Logf("hub log:\n%s", lg.String())
		}
	})
	return h, srv.URL, lg
}

// gwTool calls a tool and returns its result or error.
func gwTool(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, error) {
	t.Helper()
	return cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: name, Arguments: args})
}

// needProgram returns the path of a program the test needs, or skips the
// test with a clear message; in CI (CI=true), or once scripts/test.sh has
// installed the programs (MCP_HUB_REQUIRE_REAL=1), a missing one fails it.
func needProgram(t testing.TB, name, debianPackage string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	msg := name + " is not installed (Debian package " + debianPackage + "; scripts/test.sh installs it)"
	if strings.EqualFold(os.Getenv("CI"), "true") || os.Getenv("MCP_HUB_REQUIRE_REAL") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}
