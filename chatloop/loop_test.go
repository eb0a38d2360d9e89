package chatloop

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

func ptr[T any](v T) *T { return &v }

// testConfig is a hub.yaml chat section pointing at a scripted provider.
func testConfig(p *scripted) *Config {
	return &Config{
		Providers: map[string]config.Provider{"local": p.config()},
		Models:    map[string]config.Model{"m": {Provider: "local", Model: "test-model"}},
		Chat:      config.Chat{DefaultModel: "m", MaxRounds: 50, ParallelToolCalls: ptr(true)},
	}
}

// runResult is what one scripted turn produced.
type runResult struct {
	answer   string
	err      error
	streamed string
	chat     *Chat
}

func runTurn(t *testing.T, h *testHub, p *scripted, stream bool, cfgMut func(*Config), prompt string) runResult {
	t.Helper()
	cfg := testConfig(p)
	if cfgMut != nil {
		cfgMut(cfg)
	}
	var mu sync.Mutex
	var streamed strings.Builder
	chat, err := cfg.NewChat(h.dial(t), ChatOptions{Stream: stream, Logger: testLogger(t), Observer: Observer{
		Text: func(s string) { mu.Lock(); streamed.WriteString(s); mu.Unlock() },
	}})
	if err != nil {
		t.Fatal(err)
	}
	answer, err := chat.Send(context.Background(), prompt)
	return runResult{answer: answer, err: err, streamed: streamed.String(), chat: chat}
}

func withTools(extra ...string) []string {
	out := append(slices.Clone(initialTools), extra...)
	slices.Sort(out)
	return out
}

func eq[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func eqSlice[T comparable](t *testing.T, what string, got, want []T) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s =\n  %v\nwant\n  %v", what, got, want)
	}
}

func eqResults(t *testing.T, what string, got, want []sentResult) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s =\n  %+v\nwant\n  %+v", what, got, want)
	}
}

// TestLoop plays each scenario of the issue against both wire formats,
// streaming and not, and checks the exact requests the provider got.
func TestLoop(t *testing.T) {
	scenarios := []struct {
		name   string
		steps  []step
		cfg    func(*Config)
		hub    func(*testHub) // adjusts the hub before the turn
		prompt string
		check  func(t *testing.T, h *testHub, p *scripted, r runResult)
	}{
		{
			name:  "answers directly",
			steps: []step{reply("Hello there!")},
			check: func(t *testing.T, h *testHub, p *scripted, r runResult) {
				if r.err != nil {
					t.Fatal(r.err)
				}
				eq(t, "answer", r.answer, "Hello there!")
				eq(t, "requests", len(p.requests()), 1)
				eqSlice(t, "tools offered", p.toolsOffered(0), initialTools)
				s := r.chat.Stats()
				eq(t, "model calls", s.ModelCalls, 1)
				eq(t, "input tokens", s.InputTokens, int64(10))
				eq(t, "output tokens", s.OutputTokens, int64(5))
				eq(t, "tool calls", s.ToolCalls, 0)
			},
		},
		{
			name: "searches, calls the found tool, answers",
			steps: []step{
				reply("Let me look.", call("c1", "search_tools", `{"query":"weather forecast"}`)),
				reply("", call("c2", "weather__get_forecast", `{"location":"Paris"}`)),
				reply("It is sunny in Paris."),
			},
			check: func(t *testing.T, h *testHub, p *scripted, r runResult) {
				if r.err != nil {
					t.Fatal(r.err)
				}
				eq(t, "answer", r.answer, "It is sunny in Paris.")
				eq(t, "requests", len(p.requests()), 3)
				eqSlice(t, "round 1 tools", p.toolsOffered(0), initialTools)
				// The loaded tool is offered on the very next model call.
				eqSlice(t, "round 2 tools", p.toolsOffered(1), withTools("weather__get_forecast"))
				eqSlice(t, "round 3 tools", p.toolsOffered(2), withTools("weather__get_forecast"))
				eqResults(t, "round 2 results", p.toolResults(1), []sentResult{{CallID: "c1", Text: "Found 1 tool(s):\n  [weather] weather__get_forecast: Get weather forecast for a location."}})
				eqResults(t, "round 3 results", p.toolResults(2), []sentResult{{CallID: "c2", Text: "Sunny in Paris"}})
				eq(t, "forecast calls upstream", h.callCount("weather__get_forecast"), 1)
				s := r.chat.Stats()
				eq(t, "model calls", s.ModelCalls, 3)
				eq(t, "searches", s.Searches, 1)
				eq(t, "tools discovered", s.ToolsDiscovered, 1)
				eq(t, "tool calls", s.ToolCalls, 2)
				eq(t, "by tool", s.ToolCallsByTool["weather__get_forecast"], 1)
				eq(t, "by server weather", s.ToolCallsByServer["weather"], 1)
				eq(t, "by server _hub", s.ToolCallsByServer["_hub"], 1)
				eq(t, "tokens in", s.InputTokens, int64(30))
				// History: user, assistant(call), tool, assistant(call), tool, assistant.
				roles := []string{}
				for _, m := range r.chat.History() {
					roles = append(roles, m.Role)
				}
				eqSlice(t, "history roles", roles, []string{"user", "assistant", "tool", "assistant", "tool", "assistant"})
			},
		},
		{
			// The chat must not depend on when (or whether) list_changed
			// arrives: a tool loaded in round n is offered in round n+1.
			name: "a loaded tool is offered next round even without list_changed",
			hub: func(h *testHub) {
				h.server.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						if method == "notifications/tools/list_changed" {
							return nil, nil
						}
						return next(ctx, method, req)
					}
				})
			},
			steps: []step{
				reply("", call("c1", "search_tools", `{"query":"weather forecast"}`)),
				reply("", call("c2", "weather__get_forecast", `{"location":"Oslo"}`)),
				reply("Sunny in Oslo."),
			},
			check: func(t *testing.T, h *testHub, p *scripted, r runResult) {
				if r.err != nil {
					t.Fatal(r.err)
				}
				eqSlice(t, "round 2 tools", p.toolsOffered(1), withTools("weather__get_forecast"))
				eqResults(t, "round 3 results", p.toolResults(2), []sentResult{{CallID: "c2", Text: "Sunny in Oslo"}})
			},
		},
		{
			name: "two tool calls in parallel, results in call order",
			steps: []step{
				reply("", call("c1", "par__one", `{}`), call("c2", "par__two", `{}`)),
				reply("both done"),
			},
			check: func(t *testing.T, h *testHub, p *scripted, r runResult) {
				if r.err != nil {
					t.Fatal(r.err)
				}
				eq(t, "answer", r.answer, "both done")
				// par__one finishes last; a sequential loop would time out.
				eqResults(t, "round 2 results", p.toolResults(1), []sentResult{{CallID: "c1", Text: "par__one"}, {CallID: "c2", Text: "par__two"}})
				eq(t, "tool calls", r.chat.Stats().ToolCalls, 2)
			},
		},
		{
			name: "a tool error goes back to the model",
			steps: []step{
				reply("", call("c1", "fail__boom", `{}`)),
				reply("The tool failed: boom."),
			},
			check: func(t *testing.T, h *testHub, p *scripted, r runResult) {
				if r.err != nil {
					t.Fatal(r.err)
				}
				eq(t, "answer", r.answer, "The tool failed: boom.")
				eqResults(t, "round 2 results", p.toolResults(1), []sentResult{{CallID: "c1", Text: "Error: boom", IsError: true}})
				eq(t, "tool errors", r.chat.Stats().ToolErrors, 1)
			},
		},
		{
			name: "unknown tool and bad arguments are error results",
			steps: []step{
				reply("", call("c1", "nope__missing", `{}`), call("c2", "math__add", `{"a": 1,`)),
				reply("ok"),
			},
			check: func(t *testing.T, h *testHub, p *scripted, r runResult) {
				if r.err != nil {
					t.Fatal(r.err)
				}
				got := p.toolResults(1)
				if len(got) != 2 || !got[0].IsError || !got[1].IsError ||
					!strings.Contains(got[0].Text, "nope__missing") || !strings.Contains(got[1].Text, "not a JSON object") {
					t.Errorf("results = %+v, want two error results naming the problem", got)
				}
				eq(t, "math__add upstream calls", h.callCount("math__add"), 0)
			},
		},
		{
			name: "stops at max_rounds and says so",
			cfg:  func(c *Config) { c.Chat.MaxRounds = 2 },
			steps: []step{
				reply("Checking.", call("c1", "clock__now", `{}`)),
				reply("Checking again.", call("c2", "clock__now", `{}`)),
			},
			check: func(t *testing.T, h *testHub, p *scripted, r runResult) {
				var mr *MaxRoundsError
				if !errors.As(r.err, &mr) {
					t.Fatalf("err = %v, want MaxRoundsError", r.err)
				}
				eq(t, "rounds", mr.Rounds, 2)
				if !strings.Contains(r.err.Error(), "max_rounds") {
					t.Errorf("error %q does not name max_rounds", r.err)
				}
				eq(t, "requests", len(p.requests()), 2)
				eq(t, "clock calls", h.callCount("clock__now"), 2)
				eq(t, "history rolled back", len(r.chat.History()), 0)
			},
		},
		{
			name: "429 then success (SDK retry)",
			steps: []step{
				{status: 429, header: map[string]string{"Retry-After-Ms": "10"}, raw: `{"error":{"message":"Rate limit reached","type":"rate_limit_error"},"type":"error"}`},
				reply("after the retry"),
			},
			check: func(t *testing.T, h *testHub, p *scripted, r runResult) {
				if r.err != nil {
					t.Fatal(r.err)
				}
				eq(t, "answer", r.answer, "after the retry")
				eq(t, "HTTP requests", len(p.requests()), 2)
				eq(t, "model calls", r.chat.Stats().ModelCalls, 1)
			},
		},
		{
			name:  "garbage response",
			steps: []step{{status: 200, header: map[string]string{"Content-Type": "text/html"}, raw: "<html>502 Bad Gateway from some proxy</html>"}},
			check: func(t *testing.T, h *testHub, p *scripted, r runResult) {
				var pe *ProviderError
				if !errors.As(r.err, &pe) {
					t.Fatalf("err = %v (%T), want ProviderError", r.err, r.err)
				}
				msg := r.err.Error()
				for _, want := range []string{"provider local", "model test-model", "base_url"} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q does not contain %q", msg, want)
					}
				}
				if strings.Contains(msg, "\n") {
					t.Errorf("error is not one line: %q", msg)
				}
			},
		},
	}
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		for _, stream := range []bool{false, true} {
			mode := kind + "/json"
			if stream {
				mode = kind + "/stream"
			}
			for _, sc := range scenarios {
				t.Run(mode+"/"+sc.name, func(t *testing.T) {
					t.Parallel()
					h := newTestHub(t)
					if sc.hub != nil {
						sc.hub(h)
					}
					p := newScripted(t, kind, sc.steps...)
					prompt := sc.prompt
					if prompt == "" {
						prompt = "hi"
					}
					r := runTurn(t, h, p, stream, sc.cfg, prompt)
					sc.check(t, h, p, r)
					if stream && r.err == nil && r.streamed == "" && r.answer != "" {
						t.Errorf("nothing streamed, answer %q", r.answer)
					}
					if stream && r.err == nil && !strings.HasSuffix(r.streamed, r.answer) {
						t.Errorf("streamed %q does not end with the answer %q", r.streamed, r.answer)
					}
					// The first request always carries the user's prompt.
					if reqs := p.requests(); len(reqs) > 0 {
						if s, _ := reqs[0]["stream"].(bool); s != stream {
							t.Errorf("request stream = %v, want %v", s, stream)
						}
					}
				})
			}
		}
	}
}
