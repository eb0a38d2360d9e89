package chatloop

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

// TestHandlerApprovals: under chat.approve a tool that needs approval
// makes POST /v1/chat answer 202 with the pending call; the client sends
// the conversation back with its answer, by the id the hub issued, and
// the call runs (yes) or goes back to the model refused (no).
func TestHandlerApprovals(t *testing.T) {
	for _, answer := range []string{"yes", "no"} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			h := newTestHub(t)
			p := newScripted(t, config.ProviderOpenAI,
				reply("", call("c1", "math__add", `{"a":2,"b":3}`)),
				reply("finished"),
			)
			cfg := testConfig(p)
			cfg.Chat.Approve = config.ApproveOnMiss
			cfg.Chat.ApproveTools = []string{"math__*"}
			srv := httptest.NewServer(Handler(cfg, h, testLogger(t)))
			defer srv.Close()
			post := func(body any) (int, ChatResponse) { return postChat(t, srv.URL, body) }
			status, out := post(map[string]any{"model": "m", "messages": []Message{{Role: RoleUser, Content: "2+3?"}}})
			eq(t, "status", status, 202)
			if len(out.PendingApprovals) != 1 || out.PendingApprovals[0].CallID != "c1" || out.PendingApprovals[0].Tool != "math__add" ||
				!strings.HasPrefix(out.PendingApprovals[0].ID, "ap_") {
				t.Fatalf("pending = %+v", out.PendingApprovals)
			}
			eq(t, "calls before approval", h.callCount("math__add"), 0)

			status, out = post(map[string]any{"model": "m", "messages": out.Messages, "approvals": map[string]string{out.PendingApprovals[0].ID: answer}})
			eq(t, "status", status, 200)
			eq(t, "answer", out.Answer, "finished")
			got := p.toolResults(1)[0].Text
			if answer == "yes" {
				eq(t, "calls", h.callCount("math__add"), 1)
				eq(t, "result", got, "5")
			} else {
				eq(t, "calls", h.callCount("math__add"), 0)
				if !strings.Contains(got, "the user did not approve running math__add") {
					t.Errorf("result = %q", got)
				}
			}
		})
	}
}

// TestHandlerApprovalIDs: a provider that numbers its calls from call_0 in
// every message. Approving message 1's call_0 must not run message 2's
// call_0, a destructive call nobody was shown; nor may an approval be
// used twice, by another principal, for a changed conversation or
// changed arguments, or by the provider's call id. Only the id the hub
// issued for that very call, presented by its principal, runs it. With
// chat.approve unset (the API's default) the destructive call waits too.
func TestHandlerApprovalIDs(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	p := newScripted(t, config.ProviderOpenAI,
		reply("", call("call_0", "math__add", `{"a":2,"b":3}`)),
		reply("", call("call_0", "notes__delete", `{"id":"n1"}`)),
		reply("finished"),
	)
	cfg := testConfig(p)
	cfg.Chat.ApproveTools = []string{"math__*"}
	srv := httptest.NewServer(asPrincipal(Handler(cfg, h, testLogger(t))))
	defer srv.Close()
	post := func(principal string, body any) (int, ChatResponse) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(string(raw)))
		req.Header.Set("X-Test-Principal", principal)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out ChatResponse
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatalf("decode (status %d): %v", res.StatusCode, err)
		}
		return res.StatusCode, out
	}
	pendingOne := func(what string, status int, out ChatResponse, tool string) PendingApproval {
		t.Helper()
		if status != 202 || len(out.PendingApprovals) != 1 || out.PendingApprovals[0].Tool != tool {
			t.Fatalf("%s: status %d, pending %+v; want %s pending", what, status, out.PendingApprovals, tool)
		}
		return out.PendingApprovals[0]
	}

	status, out := post("alice", map[string]any{"model": "m", "messages": []Message{{Role: RoleUser, Content: "add, then delete n1"}}})
	first := pendingOne("message 1", status, out, "math__add")
	msgs1 := out.Messages

	// The provider's call id is not an approval.
	status, out = post("alice", map[string]any{"model": "m", "messages": msgs1, "approvals": map[string]string{"call_0": "yes"}})
	pendingOne("answered by call_0", status, out, "math__add")
	// Nor is the id presented by someone else.
	status, out = post("bob", map[string]any{"model": "m", "messages": msgs1, "approvals": map[string]string{first.ID: "yes"}})
	pendingOne("answered by bob", status, out, "math__add")
	// Nor for other arguments than those shown.
	changed := append([]Message(nil), msgs1...)
	last := changed[len(changed)-1]
	last.ToolCalls = []ToolCall{{ID: "call_0", Name: "math__add", Arguments: json.RawMessage(`{"a":200,"b":3}`)}}
	changed[len(changed)-1] = last
	status, out = post("alice", map[string]any{"model": "m", "messages": changed, "approvals": map[string]string{first.ID: "yes"}})
	pendingOne("changed arguments", status, out, "math__add")
	// Nor for a changed conversation.
	edited := append([]Message(nil), msgs1...)
	edited[0].Content = "something else entirely"
	status, out = post("alice", map[string]any{"model": "m", "messages": edited, "approvals": map[string]string{first.ID: "yes"}})
	pendingOne("edited conversation", status, out, "math__add")
	eq(t, "math__add calls before its approval", h.callCount("math__add"), 0)

	// The right principal, conversation and id (with the conversation
	// re-encoded, as a client in another language would): it runs, and
	// message 2's call_0, the destructive one, waits for its own answer.
	var reencoded []any
	raw, _ := json.Marshal(msgs1)
	json.Unmarshal(raw, &reencoded)
	status, out = post("alice", map[string]any{"model": "m", "messages": reencoded, "approvals": map[string]string{first.ID: "yes"}})
	second := pendingOne("message 2", status, out, "notes__delete")
	eq(t, "math__add calls", h.callCount("math__add"), 1)
	eq(t, "notes__delete calls without approval", h.callCount("notes__delete"), 0)
	if second.ID == first.ID || second.CallID != "call_0" {
		t.Fatalf("message 2's pending call: %+v (message 1's id %s)", second, first.ID)
	}
	msgs2 := out.Messages

	// The first id is spent: replayed with message 2, it runs nothing.
	status, out = post("alice", map[string]any{"model": "m", "messages": msgs2, "approvals": map[string]string{first.ID: "yes"}})
	pendingOne("replayed first id", status, out, "notes__delete")
	eq(t, "notes__delete calls", h.callCount("notes__delete"), 0)

	status, out = post("alice", map[string]any{"model": "m", "messages": msgs2, "approvals": map[string]string{second.ID: "yes"}})
	eq(t, "status", status, 200)
	eq(t, "answer", out.Answer, "finished")
	eq(t, "notes__delete calls", h.callCount("notes__delete"), 1)
	eq(t, "math__add calls", h.callCount("math__add"), 1)
}

// TestHandlerApprovalPartialAnswer: a round with two calls that need
// approval, answered for one only: nothing of the round runs, and both
// are pending again, each with a new id (the answer given is spent), so
// the client sees all that still waits.
func TestHandlerApprovalPartialAnswer(t *testing.T) {
	t.Parallel()
	h := newTestHub(t)
	p := newScripted(t, config.ProviderAnthropic,
		reply("", call("call_0", "math__add", `{"a":2,"b":3}`), call("call_1", "notes__delete", `{"id":"n1"}`)),
		reply("finished"),
	)
	cfg := testConfig(p)
	cfg.Chat.ApproveTools = []string{"math__*"}
	srv := httptest.NewServer(Handler(cfg, h, testLogger(t)))
	defer srv.Close()
	status, out := postChat(t, srv.URL, map[string]any{"model": "m", "messages": []Message{{Role: RoleUser, Content: "add and delete"}}})
	if status != 202 || len(out.PendingApprovals) != 2 {
		t.Fatalf("status %d, pending %+v; want both calls pending", status, out.PendingApprovals)
	}
	first := out.PendingApprovals
	status, out = postChat(t, srv.URL, map[string]any{"model": "m", "messages": out.Messages, "approvals": map[string]string{first[0].ID: "yes"}})
	if status != 202 || len(out.PendingApprovals) != 2 || out.PendingApprovals[0].Tool != "math__add" ||
		out.PendingApprovals[1].Tool != "notes__delete" || out.PendingApprovals[0].ID == first[0].ID ||
		out.PendingApprovals[1].Why != first[1].Why {
		t.Fatalf("after a partial answer: status %d, pending %+v", status, out.PendingApprovals)
	}
	eq(t, "math__add calls", h.callCount("math__add"), 0)
	answers := map[string]string{}
	for _, pa := range out.PendingApprovals {
		answers[pa.ID] = "yes"
	}
	status, out = postChat(t, srv.URL, map[string]any{"model": "m", "messages": out.Messages, "approvals": answers})
	eq(t, "status", status, 200)
	eq(t, "answer", out.Answer, "finished")
	eq(t, "math__add calls", h.callCount("math__add"), 1)
	eq(t, "notes__delete calls", h.callCount("notes__delete"), 1)
}
