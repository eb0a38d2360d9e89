//go:build linux

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// chatModes runs fn for each model (wire format) in one-shot mode and in
// the REPL; ask runs one user turn and returns the answer's output.
func chatModes(t *testing.T, fn func(t *testing.T, model string, ask func(cfg, prompt string, args ...string) (out string))) {
	for _, model := range chatModels {
		t.Run(model+"/p", func(t *testing.T) {
			fn(t, model, func(cfg, prompt string, args ...string) string {
				stdout, stderr, code := chatOneShot(t, cfg, append([]string{"--model", model, "-p", prompt}, args...)...)
				if code != 0 {
					t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
				}
				return stdout + stderr
			})
		})
		t.Run(model+"/repl", func(t *testing.T) {
			fn(t, model, func(cfg, prompt string, args ...string) string {
				tm := startREPL(t, cfg, append([]string{"--model", model}, args...)...)
				tm.send(prompt)
				// The REPL reads /stats once the turn has ended.
				tm.send("/stats")
				tm.waitFor("wall time:")
				return tm.quit()
			})
		})
	}
}

// searchThenAnswer is a model that searches for the calculator on the
// user's turn and answers "DONE" once a tool result is back.
func searchThenAnswer(r fixture.LLMRequest) fixture.LLMReply {
	if r.Last().Role == "user" {
		return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "s1", Name: "search_tools", Args: `{"query":"evaluate arithmetic expression calculator"}`}}}
	}
	return fixture.LLMReply{Text: "DONE"}
}

// TestChatTemplate: a model's template renders the system prompt from the
// tools of each call, so the tool a search loaded is in the next call's
// prompt; --system wins over the template.
func TestChatTemplate(t *testing.T) {
	tmpl := "You have {{len .Tools}} tools.\n{{range .Tools}}- {{.Name}}: {{.Description}}\n{{end}}"
	chatModes(t, func(t *testing.T, model string, ask func(cfg, prompt string, args ...string) string) {
		llm := fixture.StartLLM(t, searchThenAnswer)
		cfg := writeChatConfig(t, llm, chatSetup{
			Model: ", template: listing",
			Extra: "templates:\n  listing: {file: listing.tmpl}\n",
			Files: map[string]string{"listing.tmpl": tmpl},
		})
		out := ask(cfg, "what is 6*7?")
		if !strings.Contains(out, "DONE") {
			t.Fatalf("no answer:\n%s", out)
		}
		reqs := llm.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d model calls, want 2", len(reqs))
		}
		first, second := reqs[0].System, reqs[1].System
		if !strings.HasPrefix(first, "You have ") || !strings.Contains(first, "- search_tools: ") || strings.Contains(first, "- calc__evaluate: ") {
			t.Errorf("first call's system prompt is not the template over the first tools:\n%s", first)
		}
		if !strings.Contains(second, "- calc__evaluate: ") {
			t.Errorf("second call's system prompt lacks the tool the search loaded:\n%s", second)
		}
	})

	t.Run("system wins", func(t *testing.T) {
		llm := fixture.StartLLM(t, func(fixture.LLMRequest) fixture.LLMReply { return fixture.LLMReply{Text: "DONE"} })
		cfg := writeChatConfig(t, llm, chatSetup{
			Model: ", template: listing",
			Extra: "templates:\n  listing: \"{{len .Tools}} tools\"\n",
		})
		if _, stderr, code := chatOneShot(t, cfg, "--model", "gpt", "-p", "hi", "--system", "be terse"); code != 0 {
			t.Fatal(stderr)
		}
		if got := llm.Requests()[0].System; got != "be terse" {
			t.Errorf("system = %q, want --system's", got)
		}
	})
}

// TestChatTemplateErrors: a broken template is a config error naming the
// file and line.
func TestChatTemplateErrors(t *testing.T) {
	llm := fixture.StartLLM(t, func(fixture.LLMRequest) fixture.LLMReply { return fixture.LLMReply{Text: "DONE"} })
	cases := []struct {
		name  string
		setup chatSetup
		want  string
		code  int
	}{
		{"file syntax", chatSetup{Model: ", template: t", Extra: "templates:\n  t: {file: t.tmpl}\n", Files: map[string]string{"t.tmpl": "line one\n{{range .Tools}}\n{{.Name}\n"}},
			"t.tmpl:3: templates.t: ", exitConfig},
		{"inline syntax", chatSetup{Model: ", template: t", Extra: "templates:\n  t: |\n    fine\n    {{if}}\n"},
			"hub.yaml:%d: templates.t: ", exitConfig},
		{"unknown template", chatSetup{Model: ", template: nope"},
			`unknown template "nope"`, exitConfig},
		{"execution", chatSetup{Model: ", template: t", Extra: "templates:\n  t: {file: t.tmpl}\n", Files: map[string]string{"t.tmpl": "ok\n{{.Nope}}\n"}},
			"t.tmpl:2:", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := writeChatConfig(t, llm, tc.setup)
			if strings.Contains(tc.want, "%d") {
				// The line of hub.yaml the broken action is on.
				data, _ := os.ReadFile(cfg)
				before, _, _ := strings.Cut(string(data), "{{if}}")
				tc.want = fmt.Sprintf(tc.want, strings.Count(before, "\n")+1)
			}
			_, stderr, code := chatOneShot(t, cfg, "--model", "gpt", "-p", "hi")
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr lacks %q:\n%s", code, tc.code, tc.want, stderr)
			}
		})
	}
}

// calcModel searches for the calculator, evaluates 6*7 with it and
// answers "DONE".
func calcModel(r fixture.LLMRequest) fixture.LLMReply {
	switch {
	case r.Last().Role == "user":
		return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "s1", Name: "search_tools", Args: `{"query":"evaluate arithmetic expression calculator"}`}}}
	case r.LastResults()[0].CallID == "s1":
		return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "c1", Name: "calc__evaluate", Args: `{"expression":"6*7"}`}}}
	}
	return fixture.LLMReply{Text: "DONE"}
}

// TestChatToolResultFormat: each chat.tool_result_format is what the model
// receives, in both wire formats.
func TestChatToolResultFormat(t *testing.T) {
	formats := []struct{ format, want string }{
		{"result", "6*7 = 42"},
		{"name_result", "calc__evaluate → 6*7 = 42"},
		{"name_args_result", `calc__evaluate({"expression":"6*7"}) → 6*7 = 42`},
	}
	for _, f := range formats {
		t.Run(f.format, func(t *testing.T) {
			chatModes(t, func(t *testing.T, model string, ask func(cfg, prompt string, args ...string) string) {
				llm := fixture.StartLLM(t, calcModel)
				cfg := writeChatConfig(t, llm, chatSetup{Extra: "chat:\n  tool_result_format: " + f.format + "\n"})
				if out := ask(cfg, "what is 6*7?"); !strings.Contains(out, "DONE") {
					t.Fatalf("no answer:\n%s", out)
				}
				reqs := llm.Requests()
				if len(reqs) != 3 {
					t.Fatalf("%d model calls, want 3", len(reqs))
				}
				got := reqs[2].LastResults()
				if len(got) != 1 || got[0].Text != f.want {
					t.Errorf("the model received %+v, want %q", got, f.want)
				}
			})
		})
	}
}

// TestChatRefreshInterval: a server that adds a tool without list_changed
// is re-listed on its refresh_interval; the hub's index picks the tool up
// and the model's search finds it. The model searches until it does,
// waiting a moment between searches.
func TestChatRefreshInterval(t *testing.T) {
	fx := fixture.Build(t)
	servers := fmt.Sprintf(`  fx:
    command: %q
    args: ["-silent", "-tools", "ping", "-add-tool-after", "1s", "-add-tool", "fresh"]
    description: A server whose tools change silently.
    refresh_interval: 250ms
`, fx)
	chatModes(t, func(t *testing.T, model string, ask func(cfg, prompt string, args ...string) string) {
		llm := fixture.StartLLM(t, func(r fixture.LLMRequest) fixture.LLMReply {
			search := fixture.LLMReply{Calls: []fixture.LLMCall{{ID: fmt.Sprintf("s%d", len(r.Messages)), Name: "search_tools", Args: `{"query":"fresh"}`}}}
			if r.Last().Role == "user" {
				return search
			}
			res := r.LastResults()[0]
			switch {
			case strings.HasPrefix(res.CallID, "f"):
				return fixture.LLMReply{Text: "DONE " + res.Text}
			case strings.Contains(res.Text, "fx__fresh"):
				return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "f1", Name: "fx__fresh", Args: `{"said":"hello"}`}}}
			}
			time.Sleep(100 * time.Millisecond) // not found yet: look again in a moment
			return search
		})
		cfg := writeChatConfig(t, llm, chatSetup{Servers: servers, Extra: "chat:\n  max_rounds: 300\n"})
		out := ask(cfg, "find the fresh tool")
		if !strings.Contains(out, "DONE") || !strings.Contains(out, "hello") {
			t.Fatalf("the new tool was not found and called:\n%s", out)
		}
	})
}

// TestChatHistoryBudget: a 200-round turn under chat.history stays within
// the budget on every model call (the oldest rounds go), every tool result
// still follows its call on the wire, the user's message stays, and the
// stats say what was trimmed.
func TestChatHistoryBudget(t *testing.T) {
	const rounds = 200
	chatModes(t, func(t *testing.T, model string, ask func(cfg, prompt string, args ...string) string) {
		var n atomic.Int32
		llm := fixture.StartLLM(t, func(r fixture.LLMRequest) fixture.LLMReply {
			i := n.Add(1) - 1
			if i == rounds {
				return fixture.LLMReply{Text: "DONE"}
			}
			return fixture.LLMReply{Text: fmt.Sprintf("round %d", i), Calls: []fixture.LLMCall{{ID: fmt.Sprintf("c%d", i), Name: "time__current_time", Args: `{"timezone":"UTC"}`}}}
		})
		cfg := writeChatConfig(t, llm, chatSetup{Extra: "chat:\n  max_rounds: 250\n  history: {max_tokens: 3000}\n"})
		out := ask(cfg, "tick 200 times", "--stats")
		if !strings.Contains(out, "history trimmed (chat.history): ") {
			t.Errorf("the stats do not say what was trimmed:\n%s", out)
		}
		reqs := llm.Requests()
		if len(reqs) != rounds+1 {
			t.Fatalf("%d model calls, want %d", len(reqs), rounds+1)
		}
		most := 0
		for i, r := range reqs {
			if r.Messages[0].Role != "user" || r.Messages[0].Text != "tick 200 times" {
				t.Fatalf("request %d does not start with the user's message: %+v", i, r.Messages[0])
			}
			for j, m := range r.Messages {
				if m.Role != "tool" {
					continue
				}
				prev := r.Messages[j-1]
				if prev.Role != "assistant" || len(prev.Calls) != len(m.Results) || prev.Calls[0].ID != m.Results[0].CallID {
					t.Fatalf("request %d, message %d: a tool result without its call", i, j)
				}
			}
			most = max(most, len(r.Messages))
		}
		t.Logf("at most %d messages in one request", most)
		// Unbounded, the last request would carry 1 + 2*200 messages.
		if most > 2*rounds/3 {
			t.Errorf("a request carried %d messages: the budget did not bound the history", most)
		}
		if last := reqs[rounds]; last.LastResults()[0].CallID != fmt.Sprintf("c%d", rounds-1) {
			t.Errorf("the last request lacks the latest result")
		}
	})
}

// TestChatDegrade: an upstream killed during a turn does not abort it:
// one line says the turn goes on without tools, the model is asked to
// answer without them (tool_choice none), and --json says why.
func TestChatDegrade(t *testing.T) {
	fx := fixture.Build(t)
	servers := fmt.Sprintf(`  fx:
    command: %q
    args: ["-features"]
    defer_loading: false
`, fx)
	chatModes(t, func(t *testing.T, model string, ask func(cfg, prompt string, args ...string) string) {
		llm := fixture.StartLLM(t, func(r fixture.LLMRequest) fixture.LLMReply {
			if r.Last().Role == "user" {
				return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "p1", Name: "fx__pid", Args: `{}`}}}
			}
			res := r.LastResults()[0]
			if res.CallID == "p1" {
				// Kill the server, then ask it for more.
				pid, err := strconv.Atoi(strings.TrimSpace(res.Text))
				if err != nil || syscall.Kill(pid, syscall.SIGKILL) != nil {
					return fixture.LLMReply{Text: "could not kill " + res.Text}
				}
				return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "s1", Name: "fx__sleep", Args: `{"ms":10}`}}}
			}
			noTools := string(r.ResponseFormat) == "" && (r.Raw["tool_choice"] == "none" || strings.Contains(string(r.ToolChoice), `"none"`))
			if noTools && strings.Contains(r.System, "Tools are unavailable for the rest of this turn") {
				return fixture.LLMReply{Text: "DONE without tools"}
			}
			return fixture.LLMReply{Text: "DONE but not degraded"}
		})
		cfg := writeChatConfig(t, llm, chatSetup{Servers: servers})
		out := ask(cfg, "use fx")
		for _, want := range []string{"(answering without tools: server fx failed during tool call fx__sleep", "DONE without tools"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		if n := strings.Count(out, "(answering without tools"); n != 1 {
			t.Errorf("%d degrade lines, want 1:\n%s", n, out)
		}
	})

	t.Run("json", func(t *testing.T) {
		llm := fixture.StartLLM(t, func(r fixture.LLMRequest) fixture.LLMReply {
			if r.Last().Role == "user" {
				return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "p1", Name: "fx__pid", Args: `{}`}}}
			}
			if res := r.LastResults(); len(res) > 0 && res[0].CallID == "p1" {
				pid, _ := strconv.Atoi(strings.TrimSpace(res[0].Text))
				syscall.Kill(pid, syscall.SIGKILL)
				return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "s1", Name: "fx__sleep", Args: `{"ms":10}`}}}
			}
			return fixture.LLMReply{Text: "DONE"}
		})
		cfg := writeChatConfig(t, llm, chatSetup{Servers: servers})
		stdout, stderr, code := chatOneShot(t, cfg, "--model", "gpt", "-p", "use fx", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var out struct {
			Degraded string `json:"degraded"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.Degraded, "server fx failed during tool call fx__sleep") {
			t.Errorf("degraded = %q", out.Degraded)
		}
	})
}

const answerSchema = `{"type":"object","properties":{"answer":{"type":"integer"},"unit":{"type":"string"}},"required":["answer"]}`

// schemaModel answers with invalid structured output first and, once told
// why, with valid output (or invalid again when stubborn): as JSON text
// under OpenAI's response_format, as final_answer's input when Anthropic's
// formatter call forces it. It reports a request that asks for structure
// the wrong way.
func schemaModel(stubborn bool) func(r fixture.LLMRequest) fixture.LLMReply {
	return func(r fixture.LLMRequest) fixture.LLMReply {
		repair := strings.Contains(r.Last().Text, "not valid") || (len(r.LastResults()) > 0 && r.LastResults()[0].IsError)
		answer := `{"answer":"forty-two"}`
		if repair && !stubborn {
			answer = `{"answer":42,"unit":"none"}`
		}
		if r.Format == "openai" {
			if !strings.Contains(string(r.ResponseFormat), `"json_schema"`) || !strings.Contains(string(r.ResponseFormat), `"answer"`) {
				return fixture.LLMReply{Text: "no response_format"}
			}
			return fixture.LLMReply{Text: answer}
		}
		if !strings.Contains(string(r.ToolChoice), `"final_answer"`) {
			return fixture.LLMReply{Text: "It is 42."} // the ordinary answer, before the formatter call
		}
		if _, ok := r.ToolSchemas["final_answer"]; !ok {
			return fixture.LLMReply{Text: "final_answer is not offered"}
		}
		return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: fmt.Sprintf("fa%d", len(r.Messages)), Name: "final_answer", Args: answer}}}
	}
}

// TestChatSchema: --schema makes the final answer a JSON object valid
// against the schema, after one repair round; a model that stays wrong
// gets a clear error.
func TestChatSchema(t *testing.T) {
	chatModes(t, func(t *testing.T, model string, ask func(cfg, prompt string, args ...string) string) {
		llm := fixture.StartLLM(t, schemaModel(false))
		cfg := writeChatConfig(t, llm, chatSetup{Files: map[string]string{"answer.json": answerSchema}})
		out := ask(cfg, "what is 6*7?", "--schema", filepath.Join(filepath.Dir(cfg), "answer.json"))
		if !strings.Contains(out, `{"answer":42,"unit":"none"}`) {
			t.Errorf("no valid structured answer:\n%s", out)
		}
		want := 2 // answer, repair
		if model == "claude" {
			want = 3 // answer, formatter, repair
		}
		if n := len(llm.Requests()); n != want {
			t.Errorf("%d model calls, want %d", n, want)
		}
	})

	for _, model := range chatModels {
		t.Run(model+"/stubborn", func(t *testing.T) {
			llm := fixture.StartLLM(t, schemaModel(true))
			cfg := writeChatConfig(t, llm, chatSetup{Files: map[string]string{"answer.json": answerSchema}})
			stdout, stderr, code := chatOneShot(t, cfg, "--model", model, "-p", "what is 6*7?", "--schema", filepath.Join(filepath.Dir(cfg), "answer.json"))
			if code != 1 || stdout != "" || !strings.Contains(stderr, "the final answer does not match the response schema after one repair round") {
				t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
			}
		})
	}

	t.Run("bad schema", func(t *testing.T) {
		llm := fixture.StartLLM(t, schemaModel(false))
		cfg := writeChatConfig(t, llm, chatSetup{Files: map[string]string{"list.json": `{"type":"array"}`}})
		_, stderr, code := chatOneShot(t, cfg, "--model", "gpt", "-p", "x", "--schema", filepath.Join(filepath.Dir(cfg), "list.json"))
		if code != exitConfig || !strings.Contains(stderr, "must describe a JSON object") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
}

// deleteModel loads the notes server, then deletes note n1 `times` times
// (a destructive tool), then answers "DONE" with what the last delete
// said.
func deleteModel(times int) func(r fixture.LLMRequest) fixture.LLMReply {
	return func(r fixture.LLMRequest) fixture.LLMReply {
		if r.Last().Role == "user" {
			return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "s1", Name: "search_tools", Args: `{"server_name":"notes"}`}}}
		}
		deletes := 0
		for _, m := range r.Messages {
			for _, c := range m.Calls {
				if c.Name == "notes__delete_note" {
					deletes++
				}
			}
		}
		if deletes < times {
			return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: fmt.Sprintf("d%d", deletes), Name: "notes__delete_note", Args: `{"id":"n1"}`}}}
		}
		return fixture.LLMReply{Text: "DONE: " + r.LastResults()[0].Text}
	}
}

const notApproved = "the user did not approve running notes__delete_note"

// notAsked is what the model is told when -p refused a call nobody could
// approve: that it needs approval, and how the user allows it.
var notAsked = regexp.MustCompile(`notes__delete_note was not run: it needs approval \(.+\) and nobody could be asked\. ` +
	`To allow it, the user can run mcp-hub chat -p again with --yes, or set chat\.approve: off in the hub's config\.`)

// TestChatApprove: a destructive tool (notes' delete_note) waits for
// approval: -p refuses it (by default too) unless --yes or chat.approve:
// off says otherwise, and tells the model how to allow it; the REPL asks
// y/n/always and an "always" is not asked again.
func TestChatApprove(t *testing.T) {
	for _, model := range chatModels {
		t.Run(model+"/p", func(t *testing.T) {
			cases := []struct {
				name, extra string
				args        []string
				refused     bool
			}{
				{"default refuses", "", nil, true},
				{"default --yes", "", []string{"--yes"}, false},
				{"off runs", "chat:\n  approve: off\n", nil, false},
				{"on_miss refuses", "chat:\n  approve: on_miss\n", nil, true},
				{"on_miss --yes", "chat:\n  approve: on_miss\n", []string{"--yes"}, false},
				{"listed tool", "chat:\n  approve: always\n  approve_tools: [\"notes__*\"]\n", nil, true},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					llm := fixture.StartLLM(t, deleteModel(1))
					cfg := writeChatConfig(t, llm, chatSetup{Extra: tc.extra})
					stdout, stderr, code := chatOneShot(t, cfg, append([]string{"--model", model, "-p", "delete note n1"}, tc.args...)...)
					if code != 0 {
						t.Fatalf("exit %d: %s", code, stderr)
					}
					if got := notAsked.MatchString(stdout); got != tc.refused {
						t.Errorf("refused = %v, want %v; answer: %s", got, tc.refused, stdout)
					}
					if got := strings.Contains(stderr, "(refused notes__delete_note: "); got != tc.refused {
						t.Errorf("stderr refusal line = %v, want %v:\n%s", got, tc.refused, stderr)
					}
				})
			}
		})
		t.Run(model+"/repl", func(t *testing.T) {
			for _, answer := range []string{"y", "n", "always"} {
				t.Run(answer, func(t *testing.T) {
					llm := fixture.StartLLM(t, deleteModel(2))
					cfg := writeChatConfig(t, llm, chatSetup{})
					tm := startREPL(t, cfg, "--model", model)
					tm.send("delete note n1 twice")
					tm.waitFor("approve notes__delete_note {\"id\":\"n1\"}? (it may change or delete data (destructiveHint)) [y/N/always]")
					tm.send(answer)
					if answer != "always" {
						// The second delete asks again.
						tm.waitCount("approve notes__delete_note", 2)
						tm.send(answer)
					}
					tm.send("/stats")
					screen := tm.waitFor("wall time:")
					tm.quit()
					asked := strings.Count(screen, "approve notes__delete_note")
					if want := map[string]int{"y": 2, "n": 2, "always": 1}[answer]; asked != want {
						t.Errorf("asked %d times, want %d:\n%s", asked, want, screen)
					}
					if got := strings.Contains(screen, notApproved); got != (answer == "n") {
						t.Errorf("refused = %v after %q:\n%s", got, answer, screen)
					}
				})
			}
		})
	}
}

// TestChatPreselect: with chat.preselect each user turn is sent the top_k
// tools by embedding similarity plus the always-on ones (and the
// meta-tools), loaded without a search round trip: the model calls the
// deferred calc__convert_units at once. Both embedding wire formats.
func TestChatPreselect(t *testing.T) {
	emb := fixture.StartEmbeddings(t, map[string]string{"kilometers": "km", "miles": "mi"})
	for _, format := range []struct{ provider, baseURL string }{{"ollama", emb.URL}, {"openai", emb.URL + "/v1"}} {
		t.Run(format.provider, func(t *testing.T) {
			chatModes(t, func(t *testing.T, model string, ask func(cfg, prompt string, args ...string) string) {
				llm := fixture.StartLLM(t, func(r fixture.LLMRequest) fixture.LLMReply {
					if r.Last().Role == "user" && slices.Contains(r.Tools, "calc__convert_units") {
						return fixture.LLMReply{Calls: []fixture.LLMCall{{ID: "c1", Name: "calc__convert_units", Args: `{"value":5,"from":"mi","to":"km"}`}}}
					}
					if res := r.LastResults(); len(res) > 0 {
						return fixture.LLMReply{Text: "DONE " + res[0].Text}
					}
					return fixture.LLMReply{Text: "not preselected"}
				})
				cfg := writeChatConfig(t, llm, chatSetup{
					Discovery: fmt.Sprintf("  embeddings: {provider: %s, model: test-embed, base_url: %q}\n", format.provider, format.baseURL),
					Extra:     "chat:\n  preselect: {top_k: 2, always: [time__current_time]}\n",
				})
				out := ask(cfg, "calc: convert units, 5 mi in km", "--stats")
				if !strings.Contains(out, "DONE") || !strings.Contains(out, "8.04") {
					t.Fatalf("the preselected tool was not called (first tools %v):\n%s", llm.Requests()[0].Tools, out)
				}
				first := llm.Requests()[0].Tools
				for _, want := range []string{"calc__convert_units", "time__current_time", "search_tools", "call_tool"} {
					if !slices.Contains(first, want) {
						t.Errorf("first request's tools %v lack %s", first, want)
					}
				}
				// Without preselection: the five eager time tools and the two
				// meta-tools.
				if len(first) > 5 {
					t.Errorf("first request offered %d tools %v, want top_k 2 + 1 always + 2 meta-tools at most", len(first), first)
				}
				if !strings.Contains(out, "tools preselected (chat.preselect): 3") {
					t.Errorf("stats lack the preselection:\n%s", out)
				}
			})
		})
	}
}
