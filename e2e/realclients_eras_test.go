//go:build linux

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// modernSearchMarker is a phrase of search_tools' description as the hub
// words it for a client of the 2026-07-28 era only (hub/modern.go): seen in
// a model request, it proves which era the client negotiated.
const modernSearchMarker = "It answers with each tool's name, description and input schema"

// TestClaudeCodeEras plays Claude Code with MCP_PROTOCOL_NEGOTIATION=auto
// (it speaks both eras) through the hub in each era, over stdio and HTTP, 3
// turns each (issue 23, acceptances 3 and 2's measurement): every turn finds
// the calculator with search_tools and ends with the right answer. In the
// modern era (protocol.modern: true) nothing is loaded, so the model calls
// the found tool through call_tool; in the legacy era the loaded tool is on
// its next model call. The log has, per era and transport, the agent
// loop's model requests, their mean size and the turn's wall time: what
// chose protocol.modern's default.
func TestClaudeCodeEras(t *testing.T) {
	bin := os.Getenv("MCP_HUB_CLAUDE")
	if bin == "" {
		t.Skip("MCP_HUB_CLAUDE is not set: run ./scripts/test.sh, which installs Claude Code into .cache/npm and sets it")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("MCP_HUB_CLAUDE: %v (rerun ./scripts/test.sh to reinstall)", err)
	}
	base, err := os.ReadFile(filepath.Join("..", "hub.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rc := claudeCodeWith("MCP_PROTOCOL_NEGOTIATION=auto")
	var summary []string
	for _, era := range []struct {
		name   string
		modern bool
	}{{"legacy", false}, {"modern", true}} {
		cfg := filepath.Join(t.TempDir(), "hub.yaml")
		if err := os.WriteFile(cfg, append(base, fmt.Sprintf("\nprotocol:\n  modern: %t\n", era.modern)...), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, transport := range []string{"stdio", "http"} {
			t.Run(era.name+"/"+transport, func(t *testing.T) {
				hub := realClientHubWith(t, transport, cfg)
				var requests, bytesSent int
				var took time.Duration
				turns := clientTurns(t)
				for i, turn := range turns {
					script := &calcTurn{prefix: rc.prefix, expr: turn.expr, want: turn.want, start: time.Now()}
					tap := &requestTap{next: rc.api(t, script)}
					model := httptest.NewServer(tap)
					ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
					start := time.Now()
					answer, err := rc.run(ctx, []string{bin}, t.TempDir(), model.URL, hub, "What is "+turn.expr+"? Use the calculator tool.")
					took += time.Since(start)
					elapsed := time.Since(start)
					cancel()
					model.Close()
					script.mu.Lock()
					want := "The answer is " + turn.want + "."
					tap.mu.Lock()
					switch {
					case err != nil || !strings.Contains(answer, want) || script.answered != want:
						t.Errorf("turn %d (%s): answer %q (err %v); model requests:\n  %s", i+1, turn.expr, answer, err, strings.Join(script.requests, "\n  "))
					case !script.searched:
						t.Errorf("turn %d: the model never got search_tools' result", i+1)
					case tap.modern != era.modern:
						t.Errorf("turn %d: the hub served the %s era's search_tools (marker seen: %t), want %s", i+1, map[bool]string{true: "modern", false: "legacy"}[tap.modern], tap.modern, era.name)
					case era.modern && (script.loadedNext || !script.viaCallTool):
						t.Errorf("turn %d: modern era, yet the found tool was listed on the next model call (%t) or call_tool was not used (%t)", i+1, script.loadedNext, script.viaCallTool)
					case !era.modern && !script.loadedNext:
						t.Errorf("turn %d: legacy era, yet the loaded tool was not on the next model call; model requests:\n  %s", i+1, strings.Join(script.requests, "\n  "))
					}
					t.Logf("turn %d (%s) took %.1f s; model requests:\n  %s", i+1, turn.expr, elapsed.Seconds(), strings.Join(script.requests, "\n  "))
					requests += tap.agent
					bytesSent += tap.agentBytes
					tap.mu.Unlock()
					script.mu.Unlock()
				}
				line := fmt.Sprintf("%-6s %-5s %d turns: %.1f model requests/turn, %.0f bytes/request, %.1f s/turn",
					era.name, transport, len(turns), float64(requests)/float64(len(turns)), float64(bytesSent)/float64(max(requests, 1)), took.Seconds()/float64(len(turns)))
				summary = append(summary, line)
				t.Log(line)
			})
		}
	}
	t.Log("Claude Code (MCP_PROTOCOL_NEGOTIATION=auto) per era:\n" + strings.Join(summary, "\n"))
}

// requestTap counts the agent loop's model requests (those offering the
// hub's search_tools) and their bytes, and notes whether the hub served
// the modern era's search_tools.
type requestTap struct {
	next http.Handler

	mu         sync.Mutex
	agent      int
	agentBytes int
	modern     bool
}

func (tp *requestTap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if r.URL.Path == "/v1/messages" && bytes.Contains(body, []byte(`"mcp__hub__search_tools"`)) {
		tp.mu.Lock()
		tp.agent++
		tp.agentBytes += len(body)
		if bytes.Contains(body, []byte(modernSearchMarker)) {
			tp.modern = true
		}
		tp.mu.Unlock()
	}
	tp.next.ServeHTTP(w, r)
}
