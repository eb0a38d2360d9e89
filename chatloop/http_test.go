package chatloop

import (
	"context"

	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// toolsetsSeen is a testHub that records the toolset of each session.
type toolsetsSeen struct {
	*testHub
	toolsets []string
}

func (r *toolsetsSeen) Connect(ctx context.Context, toolset string, client *mcp.Client) (*mcp.ClientSession, error) {
	r.toolsets = append(r.toolsets, toolset)
	return r.testHub.Connect(ctx, toolset, client)
}

func TestHandler(t *testing.T) {
	h := newTestHub(t)
	p := newScripted(t, config.ProviderOpenAI,
		reply("", call("c1", "math__add", `{"a":2,"b":3}`)),
		reply("2 + 3 = 5"),
	)
	rec := &toolsetsSeen{testHub: h}
	srv := httptest.NewServer(Handler(testConfig(p), rec, testLogger(t)))
	defer srv.Close()

	body := `{"model":"m","toolset":"basics","messages":[{"role":"system","content":"Be terse."},{"role":"user","content":"What is 2+3?"}]}`
	status, out := postChat(t, srv.URL, body)
	eq(t, "status", status, 200)
	eq(t, "answer", out.Answer, "2 + 3 = 5")
	eq(t, "messages", len(out.Messages), 4) // user, assistant(call), tool, assistant
	eq(t, "tool result", out.Messages[2].ToolResults[0].Parts[0].Text, "5")
	eq(t, "stats tool calls", out.Stats.ToolCalls, 1)
	eq(t, "stats by server", out.Stats.ToolCallsByServer["calculator"], 1)
	eqSlice(t, "toolsets", rec.toolsets, []string{"basics"})
	sys := p.requests()[0]["messages"].([]any)[0].(map[string]any)
	eq(t, "system override", sys["content"], any("Be terse."))

	bad := []struct {
		method, body string
		status       int
		want         string
	}{
		{"GET", "", 405, "use POST"},
		{"POST", "{", 400, "invalid JSON body"},
		{"POST", `{"model":"m","messages":[]}`, 400, "messages is empty"},
		{"POST", `{"model":"m","messages":[{"role":"assistant","content":"x"}]}`, 400, `last message must have role "user"`},
		{"POST", `{"model":"m","messages":[{"role":"wizard","content":"x"}]}`, 400, `unknown role "wizard"`},
		{"POST", `{"model":"gpt-9","messages":[{"role":"user","content":"x"}]}`, 400, `unknown model "gpt-9"`},
		{"POST", `{"model":"m","messages":[{"role":"user","content":"x"}],"extra":1}`, 400, "unknown field"},
	}
	for _, b := range bad {
		req, _ := http.NewRequest(b.method, srv.URL, strings.NewReader(b.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e struct{ Error string }
		json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != b.status || !strings.Contains(e.Error, b.want) {
			t.Errorf("%s %s: %d %q, want %d containing %q", b.method, b.body, resp.StatusCode, e.Error, b.status, b.want)
		}
	}
}

func TestHandlerProviderError(t *testing.T) {
	h := newTestHub(t)
	p := newScripted(t, config.ProviderOpenAI, step{status: 401, raw: `{"error":{"message":"bad key"}}`})
	srv := httptest.NewServer(Handler(testConfig(p), h, nil))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Error string }
	json.NewDecoder(resp.Body).Decode(&e)
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(e.Error, "provider local, model test-model: the API key was rejected") {
		t.Errorf("%d %q", resp.StatusCode, e.Error)
	}
}

// postChat posts body (a JSON string, or a value to marshal) to the chat
// API at url and decodes the answer.
func postChat(t *testing.T, url string, body any) (int, ChatResponse) {
	t.Helper()
	b, ok := body.(string)
	if !ok {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		b = string(raw)
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out ChatResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("decode the chat answer (status %d): %v", resp.StatusCode, err)
	}
	return resp.StatusCode, out
}
