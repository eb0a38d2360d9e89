package chatloop

import (
	"context"
	"fmt"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

// recording wraps a real provider and keeps the provider-neutral messages
// of every request, to check what the loop sent.
type recording struct {
	Provider
	sent [][]Message
}

func (r *recording) Complete(ctx context.Context, req *Request, onText func(string)) (*Response, error) {
	r.sent = append(r.sent, append([]Message(nil), req.Messages...))
	return r.Provider.Complete(ctx, req, onText)
}

// checkPairs fails unless every tool message follows the assistant
// message whose calls it answers, result for call, and the history starts
// with a user message.
func checkPairs(t *testing.T, what string, msgs []Message) {
	t.Helper()
	if len(msgs) == 0 || msgs[0].Role != RoleUser {
		t.Fatalf("%s: does not start with a user message", what)
	}
	for i, m := range msgs {
		if m.Role != RoleTool {
			continue
		}
		prev := msgs[i-1]
		if prev.Role != RoleAssistant || len(prev.ToolCalls) != len(m.ToolResults) {
			t.Fatalf("%s: message %d: tool results without their calls", what, i)
		}
		for j, r := range m.ToolResults {
			if r.CallID != prev.ToolCalls[j].ID {
				t.Fatalf("%s: message %d: result %s answers no call of the message before", what, i, r.CallID)
			}
		}
	}
}

// TestHistoryBudget: a 200-round turn stays within chat.history's token
// budget on every model call, with calls and results paired and the
// user's message kept, in both wire formats; an earlier turn goes first.
func TestHistoryBudget(t *testing.T) {
	const rounds, budget = 200, 1500
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := newTestHub(t)
			steps := []step{reply("first turn answer")}
			for i := range rounds {
				steps = append(steps, reply(fmt.Sprintf("step %d", i), call(fmt.Sprintf("c%d", i), "math__add", fmt.Sprintf(`{"a":%d,"b":1}`, i))))
			}
			steps = append(steps, reply("done"))
			p := newScripted(t, kind, steps...)
			cfg := testConfig(p)
			cfg.Chat.History = config.ChatHistory{MaxTokens: budget}
			cfg.Chat.MaxRounds = rounds + 1
			chat, err := cfg.NewChat(h.dial(t), ChatOptions{Logger: testLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			rec := &recording{Provider: chat.opts.Provider}
			chat.opts.Provider = rec
			if _, err := chat.Send(context.Background(), "hello"); err != nil {
				t.Fatal(err)
			}
			if _, err := chat.Send(context.Background(), "add up, 200 times"); err != nil {
				t.Fatal(err)
			}
			var tc tokenCounter
			for i, msgs := range rec.sent {
				total := 0
				for _, m := range msgs {
					total += tc.message(m)
				}
				if total > budget {
					t.Fatalf("request %d: ~%d tokens of history, budget %d", i, total, budget)
				}
				checkPairs(t, fmt.Sprintf("request %d", i), msgs)
			}
			last := rec.sent[len(rec.sent)-1]
			if last[0].Content != "add up, 200 times" {
				t.Errorf("the last request starts with %q, want the current turn's message (the earlier turn goes first)", last[0].Content)
			}
			// The wire format agrees: the provider accepted every request and
			// the last one carries the latest result.
			eq(t, "requests", len(p.requests()), rounds+2)
			eqResults(t, "last results", p.toolResults(rounds+1), []sentResult{{CallID: fmt.Sprintf("c%d", rounds-1), Text: fmt.Sprint(rounds)}})
			s := chat.Stats()
			if s.HistoryTrimmed.Turns != 1 || s.HistoryTrimmed.Rounds < rounds/2 {
				t.Errorf("trimmed %+v, want the earlier turn and most rounds", s.HistoryTrimmed)
			}
		})
	}
}

// TestHistoryMaxTurns: max_turns keeps the last turns, whole.
func TestHistoryMaxTurns(t *testing.T) {
	h := newTestHub(t)
	p := newScripted(t, config.ProviderOpenAI, reply("one"), reply("", call("c1", "clock__now", `{}`)), reply("two"), reply("three"))
	cfg := testConfig(p)
	cfg.Chat.History = config.ChatHistory{MaxTurns: 2}
	chat, err := cfg.NewChat(h.dial(t), ChatOptions{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"q1", "q2", "q3"} {
		if _, err := chat.Send(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	// The third turn's request: system, then turn 2 (user, assistant call,
	// tool, assistant), then q3.
	msgs := p.requests()[3]["messages"].([]any)
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.(map[string]any)["role"].(string))
	}
	eqSlice(t, "roles", roles, []string{"system", "user", "assistant", "tool", "assistant", "user"})
	eq(t, "first user message", msgs[1].(map[string]any)["content"].(string), "q2")
	eq(t, "turns trimmed", chat.Stats().HistoryTrimmed.Turns, 1)
}
