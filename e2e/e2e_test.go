package e2e

// End-to-end aggregation through the CLI: the test binary re-executed as
// mcp-hub (see TestMain), with real upstreams.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// runMain runs the mcp-hub binary with args: its combined output and exit
// code (fixture.Run).
func runMain(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	return fixture.Run(t, self, env, args...)
}

// TestAggregateCLIConfigErrors: every command exits 2 on a bad config, with
// the file, line, server and fix on stderr; so does a tool name collision
// among the servers at start-up.
func TestAggregateCLIConfigErrors(t *testing.T) {
	fx := fixture.Build(t)
	for _, tc := range []struct {
		name, file, config string
		want               []string
	}{
		{"unknown key", "hub.yaml", "servers:\n  a:\n    comand: x\n",
			[]string{"hub.yaml:3: server 'a': unknown key 'comand'; did you mean 'command'?"}},
		{"bad url", "hub.yaml", "servers:\n  r:\n    url: 127.0.0.1:8080\n",
			[]string{"hub.yaml:2: server 'r': url \"127.0.0.1:8080\" is not an http(s) URL: write it like http://127.0.0.1:8080/mcp"}},
		{"duplicate", "hub.yaml", "servers:\n  a:\n    builtin: time\n  a:\n    builtin: calc\n",
			[]string{"hub.yaml:4: 'a' is defined twice (first at line 2)"}},
		{"json", "claude_desktop_config.json", "{\"mcpServers\": {\n  \"fs\": {\"url\": \"nope\"}\n}}\n",
			[]string{"claude_desktop_config.json:2: server 'fs': url \"nope\" is not an http(s) URL"}},
		{"collision", "hub.yaml", fmt.Sprintf("servers:\n  one:\n    command: %q\n    args: [-name, one, -tools, search]\n    prefix: \"\"\n  two:\n    command: %q\n    args: [-name, two, -tools, search]\n    prefix: \"\"\n", fx, fx),
			[]string{"tool name collision: 'search' from server 'one' and server 'two'", "set a different 'prefix'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := fixture.WriteFile(t, tc.file, tc.config)
			commands := [][]string{{"config", "check"}, {"tools"}}
			if tc.name == "collision" {
				commands = append(commands, []string{"serve"})
			}
			for _, args := range commands {
				out, code := runMain(t, nil, append([]string{"--config", path}, args...)...)
				if code != exitConfig {
					t.Errorf("%v: exit %d, want %d\n%s", args, code, exitConfig, out)
				}
				for _, w := range tc.want {
					if !strings.Contains(out, w) {
						t.Errorf("%v: output lacks %q:\n%s", args, w, out)
					}
				}
			}
		})
	}
}

// TestAggregateCLIServeStdio: `mcp-hub serve` on stdio aggregates a stdio
// subprocess, an HTTP server and a builtin, and passes sampling and
// progress through to the client.
func TestAggregateCLIServeStdio(t *testing.T) {
	fx := fixture.Build(t)
	webURL := fixture.StartHTTP(t, "-name", "web", "-features")
	cfg := fixture.WriteFile(t, "hub.yaml", fmt.Sprintf(`servers:
  fx:
    command: %q
    args: [-name, fx, -tools, echo, -features]
  web:
    url: %s
  clock:
    builtin: time
`, fx, webURL))
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "--config", cfg, "serve")
	cmd.Env = append(os.Environ(), envAsMain+"=1")
	var progress atomic.Int64
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { progress.Add(1) },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, fixture.Legacy())
	if err != nil {
		t.Fatalf("connect to mcp-hub serve: %v", err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"fx__echo", "fx__sample", "web__progress", "web__sleep"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if !slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "clock__") }) {
		t.Errorf("no builtin tools: %v", names)
	}
	text := func(r *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range r.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__echo", Arguments: map[string]any{"a": "b"}})
	if err != nil || text(r) != `fx:echo:{"a":"b"}` {
		t.Errorf("fx__echo: %v %v", err, r)
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fx__sample", Arguments: map[string]any{"prompt": "hi"}})
	if err != nil || text(r) != "sampled" {
		t.Errorf("fx__sample: %v %+v", err, r)
	}
	p := &mcp.CallToolParams{Name: "web__progress", Arguments: map[string]any{"steps": 2}}
	p.SetProgressToken("e2e")
	r, err = cs.CallTool(ctx, p)
	if err != nil || text(r) != "progress done: 2 steps" {
		t.Errorf("web__progress: %v %+v", err, r)
	}
	deadline := time.Now().Add(30 * time.Second)
	for progress.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if progress.Load() != 2 {
		t.Errorf("%d progress notifications, want 2", progress.Load())
	}
}
