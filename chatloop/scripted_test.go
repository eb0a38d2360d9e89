package chatloop

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// step is one scripted provider response. With raw set it is sent as is
// (status, headers, body); otherwise a reply with text and tool calls is
// rendered in the provider's real wire format, as JSON or as an SSE stream
// depending on the request's "stream" flag.
type step struct {
	status int
	header map[string]string
	raw    string

	text  string
	calls []fixture.LLMCall
}

func reply(text string, calls ...fixture.LLMCall) step { return step{text: text, calls: calls} }
func call(id, name, args string) fixture.LLMCall {
	return fixture.LLMCall{ID: id, Name: name, Args: args}
}

// scripted is a local LLM endpoint that plays steps in order and records
// every request body it received.
type scripted struct {
	t      *testing.T
	kind   string // config.ProviderOpenAI or config.ProviderAnthropic
	server *httptest.Server

	mu    sync.Mutex
	steps []step
	reqs  []map[string]any
	raw   [][]byte
	paths []string
}

func newScripted(t *testing.T, kind string, steps ...step) *scripted {
	s := &scripted{t: t, kind: kind, steps: steps}
	s.server = httptest.NewServer(http.HandlerFunc(s.handle))
	t.Cleanup(s.server.Close)
	return s
}

// baseURL is what hub.yaml's base_url would say for this endpoint.
func (s *scripted) baseURL() string {
	if s.kind == config.ProviderAnthropic {
		return s.server.URL
	}
	return s.server.URL + "/v1"
}

func (s *scripted) config() config.Provider {
	return config.Provider{Type: s.kind, BaseURL: s.baseURL(), APIKey: "test-key"}
}

func (s *scripted) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		s.t.Errorf("provider got a non-JSON body: %v", err)
	}
	wantPath := "/v1/chat/completions"
	if s.kind == config.ProviderAnthropic {
		wantPath = "/v1/messages"
	}
	if r.URL.Path != wantPath {
		s.t.Errorf("provider got %s %s, want POST %s", r.Method, r.URL.Path, wantPath)
	}
	if got := r.Header.Get("Authorization") + r.Header.Get("X-Api-Key"); !strings.Contains(got, "test-key") {
		s.t.Errorf("provider got no API key (Authorization/X-Api-Key = %q)", got)
	}
	s.mu.Lock()
	n := len(s.reqs)
	s.reqs = append(s.reqs, req)
	s.raw = append(s.raw, body)
	s.paths = append(s.paths, r.URL.Path)
	var st step
	if n < len(s.steps) {
		st = s.steps[n]
	} else {
		s.t.Errorf("provider got request %d but the script has %d steps", n+1, len(s.steps))
		st = step{status: 500, raw: `{"error":{"message":"script exhausted"}}`}
	}
	s.mu.Unlock()

	if st.raw != "" || st.status != 0 {
		for k, v := range st.header {
			w.Header().Set(k, v)
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		if st.status == 0 {
			st.status = 200
		}
		w.WriteHeader(st.status)
		io.WriteString(w, st.raw)
		return
	}
	stream, _ := req["stream"].(bool)
	fixture.WriteLLMReply(w, s.kind, stream, st.reply())
}

// reply is the step's text and tool calls.
func (st step) reply() fixture.LLMReply { return fixture.LLMReply{Text: st.text, Calls: st.calls} }

func (s *scripted) requests() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.reqs...)
}

// toolsOffered lists the tool names of request i, sorted.
func (s *scripted) toolsOffered(i int) []string {
	req := s.requests()[i]
	var names []string
	tools, _ := req["tools"].([]any)
	for _, t := range tools {
		m := t.(map[string]any)
		if s.kind == config.ProviderAnthropic {
			names = append(names, m["name"].(string))
		} else {
			names = append(names, m["function"].(map[string]any)["name"].(string))
		}
	}
	sort.Strings(names)
	return names
}

// sentResult is a tool result as a provider received it.
type sentResult struct {
	CallID  string
	Text    string
	IsError bool
}

// toolResults returns the tool results at the end of request i's
// messages (the results of the previous round), in the order sent.
func (s *scripted) toolResults(i int) []sentResult {
	req := s.requests()[i]
	msgs := req["messages"].([]any)
	var out []sentResult
	if s.kind == config.ProviderAnthropic {
		last := msgs[len(msgs)-1].(map[string]any)
		blocks, _ := last["content"].([]any)
		for _, b := range blocks {
			m := b.(map[string]any)
			if m["type"] != "tool_result" {
				continue
			}
			r := sentResult{CallID: m["tool_use_id"].(string)}
			r.IsError, _ = m["is_error"].(bool)
			content, _ := m["content"].([]any)
			for _, c := range content {
				cm := c.(map[string]any)
				if cm["type"] == "text" {
					r.Text += cm["text"].(string)
				} else {
					r.Text += "<" + cm["type"].(string) + ">"
				}
			}
			out = append(out, r)
		}
		return out
	}
	// OpenAI: the trailing run of role "tool" messages (plus an optional
	// user message carrying images).
	end := len(msgs)
	if m := msgs[end-1].(map[string]any); m["role"] == "user" {
		end--
	}
	start := end
	for start > 0 && msgs[start-1].(map[string]any)["role"] == "tool" {
		start--
	}
	for _, m := range msgs[start:end] {
		mm := m.(map[string]any)
		r := sentResult{CallID: mm["tool_call_id"].(string), Text: fmt.Sprint(mm["content"])}
		r.IsError = strings.HasPrefix(r.Text, "Error")
		out = append(out, r)
	}
	return out
}
