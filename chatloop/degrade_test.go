package chatloop

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// dyingHub is a testHub whose tool die__now ends the hub's side of the
// session mid-call: the hub itself fails during the turn.
type dyingHub struct {
	*testHub
}

func newDyingHub(t *testing.T) *dyingHub {
	d := &dyingHub{testHub: newTestHub(t)}
	d.server.AddTool(&mcp.Tool{Name: "die__now", InputSchema: objSchema(``)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		go req.Session.Close()
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return d
}

// TestDegradeHubFailure: the hub session ending mid-turn degrades the
// turn (answered without tools, tool_choice none) instead of failing it,
// and POST /v1/chat says so in its degraded field.
func TestDegradeHubFailure(t *testing.T) {
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := newDyingHub(t)
			p := newScripted(t, kind,
				reply("", call("c1", "die__now", `{}`)),
				reply("answered from memory"),
			)
			srv := httptest.NewServer(Handler(testConfig(p), h, testLogger(t)))
			defer srv.Close()
			status, out := postChat(t, srv.URL, `{"model":"m","messages":[{"role":"user","content":"go"}]}`)
			eq(t, "status", status, 200)
			eq(t, "answer", out.Answer, "answered from memory")
			if !strings.HasPrefix(out.Degraded, "the hub failed during tool call die__now") {
				t.Errorf("degraded = %q", out.Degraded)
			}
			last := p.requests()[1]
			if kind == config.ProviderOpenAI {
				eq(t, "tool_choice", last["tool_choice"], any("none"))
			} else {
				eq(t, "tool_choice", last["tool_choice"].(map[string]any)["type"], any("none"))
			}
		})
	}
}
