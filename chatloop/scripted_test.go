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
	calls []scriptCall
}

type scriptCall struct{ id, name, args string }

func reply(text string, calls ...scriptCall) step { return step{text: text, calls: calls} }
func call(id, name, args string) scriptCall       { return scriptCall{id, name, args} }

// scripted is a local LLM endpoint that plays steps in order and records
// every request body it received.
type scripted struct {
	t      *testing.T
	kind   string // TypeOpenAI or TypeAnthropic
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
	if s.kind == TypeAnthropic {
		return s.server.URL
	}
	return s.server.URL + "/v1"
}

func (s *scripted) config() ProviderConfig {
	return ProviderConfig{Type: s.kind, BaseURL: s.baseURL(), APIKey: "test-key"}
}

func (s *scripted) handle(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		s.t.Errorf("provider got a non-JSON body: %v", err)
	}
	wantPath := "/v1/chat/completions"
	if s.kind == TypeAnthropic {
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
	switch {
	case s.kind == TypeAnthropic && stream:
		writeAnthropicStream(w, st)
	case s.kind == TypeAnthropic:
		writeJSONBody(w, anthropicMessage(st))
	case stream:
		writeOpenAIStream(w, st)
	default:
		writeJSONBody(w, openAICompletion(st))
	}
}

func writeJSONBody(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func openAICompletion(st step) map[string]any {
	msg := map[string]any{"role": "assistant", "content": nil}
	if st.text != "" {
		msg["content"] = st.text
	}
	finish := "stop"
	if len(st.calls) > 0 {
		finish = "tool_calls"
		var calls []any
		for _, c := range st.calls {
			calls = append(calls, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	}
}

func sse(w io.Writer, event string, v any) {
	b, _ := json.Marshal(v)
	if event != "" {
		fmt.Fprintf(w, "event: %s\n", event)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
}

// halves splits s so that text and arguments arrive in several deltas.
func halves(s string) []string {
	if len(s) < 2 {
		return []string{s}
	}
	return []string{s[:len(s)/2], s[len(s)/2:]}
}

func writeOpenAIStream(w http.ResponseWriter, st step) {
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	sse(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	for _, part := range halves(st.text) {
		if part != "" {
			sse(w, "", chunk(map[string]any{"content": part}, nil))
		}
	}
	for i, c := range st.calls {
		sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""}}}}, nil))
		for _, part := range halves(c.args) {
			sse(w, "", chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": part}}}}, nil))
		}
	}
	finish := "stop"
	if len(st.calls) > 0 {
		finish = "tool_calls"
	}
	sse(w, "", chunk(map[string]any{}, finish))
	sse(w, "", map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
		"choices": []any{}, "usage": map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
	io.WriteString(w, "data: [DONE]\n\n")
}

func anthropicMessage(st step) map[string]any {
	content := []any{}
	if st.text != "" {
		content = append(content, map[string]any{"type": "text", "text": st.text})
	}
	for _, c := range st.calls {
		var input any = json.RawMessage(c.args)
		if !json.Valid([]byte(c.args)) {
			// A JSON body cannot carry broken JSON: send it as a string,
			// which is just as wrong for a tool's arguments.
			input = c.args
		}
		content = append(content, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": input})
	}
	stop := "end_turn"
	if len(st.calls) > 0 {
		stop = "tool_use"
	}
	return map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "test-model", "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 5}}
}

func writeAnthropicStream(w http.ResponseWriter, st step) {
	w.Header().Set("Content-Type", "text/event-stream")
	sse(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant",
		"model": "test-model", "content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	idx := 0
	if st.text != "" {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range halves(st.text) {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, c := range st.calls {
		sse(w, "content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": map[string]any{}}})
		for _, part := range halves(c.args) {
			sse(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		sse(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	stop := "end_turn"
	if len(st.calls) > 0 {
		stop = "tool_use"
	}
	sse(w, "message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	sse(w, "message_stop", map[string]any{"type": "message_stop"})
}

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
		if s.kind == TypeAnthropic {
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
	if s.kind == TypeAnthropic {
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
