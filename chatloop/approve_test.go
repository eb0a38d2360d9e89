package chatloop

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestHandlerApprovals: under chat.approve a tool that needs approval
// makes POST /v1/chat answer 202 with the pending call; the client sends
// the conversation back with its answer, and the call runs (yes) or goes
// back to the model refused (no).
func TestHandlerApprovals(t *testing.T) {
	for _, answer := range []string{"yes", "no"} {
		t.Run(answer, func(t *testing.T) {
			t.Parallel()
			h := newTestHub(t)
			p := newScripted(t, TypeOpenAI,
				reply("", call("c1", "math__add", `{"a":2,"b":3}`)),
				reply("finished"),
			)
			cfg := testConfig(p)
			cfg.Chat.Approve = ApproveOnMiss
			cfg.Chat.ApproveTools = []string{"math__*"}
			srv := httptest.NewServer(Handler(cfg, h, testLogger(t)))
			defer srv.Close()
			post := func(body any) (int, ChatResponse) { return postChat(t, srv.URL, body) }
			status, out := post(map[string]any{"model": "m", "messages": []Message{{Role: RoleUser, Content: "2+3?"}}})
			eq(t, "status", status, 202)
			if len(out.PendingApprovals) != 1 || out.PendingApprovals[0].CallID != "c1" || out.PendingApprovals[0].Tool != "math__add" {
				t.Fatalf("pending = %+v", out.PendingApprovals)
			}
			eq(t, "calls before approval", h.callCount("math__add"), 0)

			status, out = post(map[string]any{"model": "m", "messages": out.Messages, "approvals": map[string]string{"c1": answer}})
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
