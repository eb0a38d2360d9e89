//go:build linux

package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestChatAPIApprovals runs `serve --http --chat-api` with two token
// holders. With the config saying nothing about approval, the model's
// call of notes' delete_note (destructiveHint) does not run: it comes
// back as a pending approval. Bob presenting the id issued to Alice, or
// Alice presenting the provider's call id, runs nothing; Alice's own id
// runs it, once.
func TestChatAPIApprovals(t *testing.T) {
	t.Parallel()
	llm := fixture.StartLLM(t, deleteModel(1))
	cfg := writeChatConfig(t, llm, chatSetup{Extra: `auth:
  tokens:
    - {name: alice, token: alice-chat-token-0123456789}
    - {name: bob, token: bob-chat-token-0123456789}
`})
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	c := startChild(t, "chatapi", []string{envAsMain + "=1", "MCP_HUB_STATE_DIR=" + t.TempDir(),
		"MCP_HUB_NOTES_FILE=" + filepath.Join(t.TempDir(), "notes.json")},
		self, "--config", cfg, "serve", "--http", addr, "--chat-api")
	base := "http://" + addr
	fixture.Eventually(t, hubReadyTimeout, "the hub's /healthz", func() bool {
		res, err := http.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
		}
		return err == nil && res.StatusCode == http.StatusOK
	})

	type pending struct {
		ID     string `json:"id"`
		CallID string `json:"call_id"`
		Tool   string `json:"tool"`
	}
	type answer struct {
		Messages json.RawMessage `json:"messages"`
		Answer   string          `json:"answer"`
		Pending  []pending       `json:"pending_approvals"`
	}
	post := func(token string, body map[string]any) (int, answer) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/chat", strings.NewReader(string(raw)))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		cl := &http.Client{Timeout: 60 * time.Second}
		res, err := cl.Do(req)
		if err != nil {
			t.Fatalf("POST /v1/chat: %v\nhub log:\n%s", err, c.logTail(40))
		}
		defer res.Body.Close()
		var out answer
		json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	const alice, bob = "alice-chat-token-0123456789", "bob-chat-token-0123456789"
	wantPending := func(what string, status int, out answer) pending {
		t.Helper()
		if status != http.StatusAccepted || len(out.Pending) != 1 || out.Pending[0].Tool != "notes__delete_note" {
			t.Fatalf("%s: status %d, pending %+v, answer %q; want notes__delete_note pending\nhub log:\n%s", what, status, out.Pending, out.Answer, c.logTail(40))
		}
		return out.Pending[0]
	}

	status, out := post(alice, map[string]any{"model": "gpt", "messages": []map[string]string{{"role": "user", "content": "delete note n1"}}})
	p := wantPending("by default", status, out)
	calls := len(llm.Requests())

	status, out = post(bob, map[string]any{"model": "gpt", "messages": out.Messages, "approvals": map[string]string{p.ID: "yes"}})
	wantPending("alice's id presented by bob", status, out)
	status, out = post(alice, map[string]any{"model": "gpt", "messages": out.Messages, "approvals": map[string]string{p.CallID: "yes"}})
	again := wantPending("the provider's call id", status, out)
	if n := len(llm.Requests()); n != calls {
		t.Fatalf("the model was called %d more times: the delete ran without approval", n-calls)
	}

	status, out = post(alice, map[string]any{"model": "gpt", "messages": out.Messages, "approvals": map[string]string{p.ID: "yes", again.ID: "yes"}})
	if status != http.StatusOK || !strings.HasPrefix(out.Answer, "DONE") || strings.Contains(out.Answer, "approv") {
		t.Fatalf("approved by alice: status %d, answer %q\nhub log:\n%s", status, out.Answer, c.logTail(40))
	}
}
