package chatloop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// rawEndpoint is a provider endpoint whose responses the test writes by
// hand; it counts the requests it got.
type rawEndpoint struct {
	server *httptest.Server
	hits   atomic.Int32
}

func newRawEndpoint(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int)) *rawEndpoint {
	e := &rawEndpoint{}
	e.server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h(w, r, int(e.hits.Add(1)))
	}))
	t.Cleanup(e.server.Close)
	return e
}

// provider returns a provider of kind for the endpoint, with API key
// "test-key".
func (e *rawEndpoint) provider(t *testing.T, kind string) Provider {
	t.Helper()
	base := e.server.URL
	if kind != config.ProviderAnthropic {
		base += "/v1"
	}
	cfg := &Config{Providers: map[string]config.Provider{"local": {Type: kind, BaseURL: base, APIKey: "test-key"}}}
	p, err := cfg.NewProvider("local")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func complete(p Provider, stream bool) (*Response, string, error) {
	var streamed strings.Builder
	var onText func(string)
	if stream {
		onText = func(s string) { streamed.WriteString(s) }
	}
	resp, err := p.Complete(context.Background(), &Request{Model: "test-model", Messages: []Message{{Role: RoleUser, Content: "hi"}}}, onText)
	return resp, streamed.String(), err
}

func TestSSEReader(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, in string
		want     []sseEvent
	}{
		{"plain", "data: a\n\ndata: b\n\n", []sseEvent{{data: []byte("a")}, {data: []byte("b")}}},
		{"crlf and event names", "event: ping\r\ndata: {}\r\n\r\nevent: x\r\ndata:y\r\n\r\n", []sseEvent{{name: "ping", data: []byte("{}")}, {name: "x", data: []byte("y")}}},
		{"multi-line data", "data: a\ndata: b\n\n", []sseEvent{{data: []byte("a\nb")}}},
		{"comments and empty events skipped", ": keep-alive\n\nevent: nothing\n\n: OPENROUTER PROCESSING\ndata: z\n\n", []sseEvent{{data: []byte("z")}}},
		{"last event without blank line", "data: a\n\ndata: b", []sseEvent{{data: []byte("a")}, {data: []byte("b")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// One byte per read: every event arrives split.
			r := newSSEReader(iotest.OneByteReader(strings.NewReader(tc.in)), 1<<10)
			var got []sseEvent
			for {
				ev, err := r.next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, sseEvent{name: ev.name, data: append([]byte(nil), ev.data...)})
			}
			if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", tc.want) {
				t.Errorf("events = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestStreamSplitAcrossReads plays each provider's real stream a few bytes
// per network write, so events and even "data:" prefixes are cut anywhere.
func TestStreamSplitAcrossReads(t *testing.T) {
	t.Parallel()
	st := reply("Hello there, split world.", call("c1", "math__add", `{"a": 1, "b": 2}`))
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			fixture.WriteLLMReply(rec, kind, true, st.reply())
			whole := rec.Body.Bytes()
			e := newRawEndpoint(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 0; i < len(whole); i += 3 {
					w.Write(whole[i:min(i+3, len(whole))])
					w.(http.Flusher).Flush()
				}
			})
			resp, streamed, err := complete(e.provider(t, kind), true)
			if err != nil {
				t.Fatal(err)
			}
			eq(t, "streamed", streamed, st.text)
			eq(t, "content", resp.Message.Content, st.text)
			if len(resp.Message.ToolCalls) != 1 {
				t.Fatalf("tool calls = %+v", resp.Message.ToolCalls)
			}
			c := resp.Message.ToolCalls[0]
			eq(t, "call", c.ID+" "+c.Name+" "+string(c.Arguments), `c1 math__add {"a": 1, "b": 2}`)
			eq(t, "usage", resp.Usage, Usage{InputTokens: 10, OutputTokens: 5})
		})
	}
}

// TestProviderErrorBodies: each provider error shape surfaces its message
// with the status; the API key never appears, even when echoed back.
func TestProviderErrorBodies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"400 openai shape", 400, `{"error":{"message":"temperature out of range","type":"invalid_request_error","code":null}}`, "request rejected (HTTP 400: temperature out of range)"},
		{"401 echoes the key", 401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key test-key"}}`, "API key was rejected (HTTP 401: invalid x-api-key [redacted])"},
		{"429 ollama string error", 429, `{"error":"too many requests, key test-key"}`, "HTTP 429, still failing after retries: too many requests, key [redacted]"},
		{"500 vllm top-level message", 500, `{"object":"error","message":"engine crashed","type":"InternalServerError","code":500}`, "server error (HTTP 500, still failing after retries: engine crashed)"},
		{"500 html page", 500, "<html><body>Bad things</body></html>", "server error (HTTP 500, still failing after retries)"},
	}
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		for _, stream := range []bool{false, true} {
			for _, tc := range cases {
				t.Run(fmt.Sprintf("%s/stream=%v/%s", kind, stream, tc.name), func(t *testing.T) {
					t.Parallel()
					e := newRawEndpoint(t, func(w http.ResponseWriter, r *http.Request, n int) {
						w.Header().Set("Retry-After-Ms", "1")
						w.WriteHeader(tc.status)
						io.WriteString(w, tc.body)
					})
					_, _, err := complete(e.provider(t, kind), stream)
					var pe *ProviderError
					if !errors.As(err, &pe) {
						t.Fatalf("err = %v, want ProviderError", err)
					}
					msg := err.Error()
					if !strings.HasPrefix(msg, "provider local, model test-model: ") || !strings.Contains(msg, tc.want) {
						t.Errorf("error %q lacks %q", msg, tc.want)
					}
					if strings.Contains(msg, "test-key") || strings.Contains(fmt.Sprint(errors.Unwrap(err)), "test-key") {
						t.Errorf("error shows the API key: %q", msg)
					}
					eq(t, "status", pe.Status, tc.status)
				})
			}
		}
	}
}

// TestStreamErrorEvent: an error sent inside a stream that started with
// 200 names the provider's message.
func TestStreamErrorEvent(t *testing.T) {
	t.Parallel()
	bodies := map[string]string{
		config.ProviderOpenAI:    "data: {\"error\":{\"message\":\"upstream model crashed\",\"type\":\"server_error\"}}\n\n",
		config.ProviderAnthropic: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[],\"usage\":{\"input_tokens\":3}}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
	}
	want := map[string]string{
		config.ProviderOpenAI:    "error while streaming (server_error: upstream model crashed)",
		config.ProviderAnthropic: "error while streaming (overloaded_error: Overloaded)",
	}
	for kind, body := range bodies {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newRawEndpoint(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, body)
			})
			_, _, err := complete(e.provider(t, kind), true)
			if err == nil || !strings.Contains(err.Error(), "provider local, model test-model: the provider reported an "+want[kind]) {
				t.Errorf("err = %v, want %q", err, want[kind])
			}
			eq(t, "requests (a stream error is not retried)", e.hits.Load(), int32(1))
		})
	}
}

// TestProviderRetry: 408/409/429/5xx and failed connections are retried
// at most twice, waiting what Retry-After asks; a server asking for more
// than maxRetryAfter, or saying x-should-retry: false, is answered at once.
func TestProviderRetry(t *testing.T) {
	t.Parallel()
	okJSON := map[string]string{
		config.ProviderOpenAI:    `{"choices":[{"message":{"role":"assistant","content":"done"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
		config.ProviderAnthropic: `{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"done"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`,
	}
	cases := []struct {
		name     string
		fail     int // how many first requests fail
		status   int
		header   map[string]string
		wantHits int32
		wantOK   bool
		minWait  time.Duration
	}{
		{"503 with Retry-After seconds", 1, 503, map[string]string{"Retry-After": "1"}, 2, true, time.Second},
		{"429 with Retry-After-Ms", 2, 429, map[string]string{"Retry-After-Ms": "5"}, 3, true, 10 * time.Millisecond},
		{"500 three times gives up after two retries", 5, 500, map[string]string{"Retry-After-Ms": "1"}, 3, false, 0},
		{"Retry-After past the bound fails at once", 5, 429, map[string]string{"Retry-After": "3600"}, 1, false, 0},
		{"x-should-retry false", 5, 503, map[string]string{"X-Should-Retry": "false"}, 1, false, 0},
		{"400 is not retried", 5, 400, nil, 1, false, 0},
	}
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				e := newRawEndpoint(t, func(w http.ResponseWriter, r *http.Request, n int) {
					w.Header().Set("Content-Type", "application/json")
					if n <= tc.fail {
						for k, v := range tc.header {
							w.Header().Set(k, v)
						}
						w.WriteHeader(tc.status)
						io.WriteString(w, `{"error":{"message":"try later","type":"overloaded_error"}}`)
						return
					}
					io.WriteString(w, okJSON[kind])
				})
				start := time.Now()
				resp, _, err := complete(e.provider(t, kind), false)
				took := time.Since(start)
				eq(t, "requests", e.hits.Load(), tc.wantHits)
				if tc.wantOK {
					if err != nil {
						t.Fatal(err)
					}
					eq(t, "answer", resp.Message.Content, "done")
				} else if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("HTTP %d", tc.status)) {
					t.Errorf("err = %v, want the HTTP %d failure", err, tc.status)
				}
				if took < tc.minWait {
					t.Errorf("took %v, want at least the Retry-After wait %v", took, tc.minWait)
				}
				if took > 30*time.Second {
					t.Errorf("took %v: the retry wait is not bounded", took)
				}
			})
		}
	}
}

// TestProviderOversize: an SSE event past maxEventBytes, or a body past
// maxResponseBytes, fails that call with a clear error.
func TestProviderOversize(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", maxEventBytes)
	cases := []struct {
		name   string
		kind   string
		stream bool
		write  func(w io.Writer)
		want   string
	}{
		{"openai event", config.ProviderOpenAI, true, func(w io.Writer) {
			io.WriteString(w, `data: {"choices":[{"delta":{"content":"`+big+`"}}]}`+"\n\n")
		}, "an event of the response stream is larger than the 4 MiB limit"},
		{"anthropic event", config.ProviderAnthropic, true, func(w io.Writer) {
			io.WriteString(w, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\""+big+"\"}}\n\n")
		}, "an event of the response stream is larger than the 4 MiB limit"},
		{"json body", config.ProviderOpenAI, false, func(w io.Writer) {
			io.WriteString(w, `{"choices":[{"message":{"content":"`)
			for range maxResponseBytes/len(big) + 1 {
				io.WriteString(w, big)
			}
			io.WriteString(w, `"}}]}`)
		}, "the response is larger than the 64 MiB limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newRawEndpoint(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if tc.stream {
					w.Header().Set("Content-Type", "text/event-stream")
				}
				tc.write(w)
			})
			_, _, err := complete(e.provider(t, tc.kind), tc.stream)
			var pe *ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "provider local, model test-model: "+tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestProviderHeaders: the auth and version headers each API wants, and
// base_url joined as the SDKs did (with or without a trailing slash).
func TestProviderHeaders(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind, suffix, key, wantPath string
		want                        map[string]string
	}{
		{config.ProviderOpenAI, "/v1", "test-key", "/v1/chat/completions", map[string]string{"Authorization": "Bearer test-key", "X-Api-Key": ""}},
		{config.ProviderOpenAI, "/v1/", "test-key", "/v1/chat/completions", map[string]string{"Authorization": "Bearer test-key"}},
		{config.ProviderOllama, "/v1", "", "/v1/chat/completions", map[string]string{"Authorization": ""}},
		{config.ProviderAnthropic, "", "test-key", "/v1/messages", map[string]string{"X-Api-Key": "test-key", "Anthropic-Version": "2023-06-01", "Authorization": ""}},
		{config.ProviderAnthropic, "/proxy/", "test-key", "/proxy/v1/messages", map[string]string{"X-Api-Key": "test-key"}},
	}
	for _, tc := range cases {
		t.Run(tc.kind+tc.suffix, func(t *testing.T) {
			t.Parallel()
			got := make(chan *http.Request, 1)
			e := newRawEndpoint(t, func(w http.ResponseWriter, r *http.Request, n int) {
				got <- r
				w.WriteHeader(400)
			})
			cfg := &Config{Providers: map[string]config.Provider{"local": {Type: tc.kind, BaseURL: e.server.URL + tc.suffix, APIKey: tc.key}}}
			p, err := cfg.NewProvider("local")
			if err != nil {
				t.Fatal(err)
			}
			complete(p, false)
			r := <-got
			eq(t, "path", r.URL.Path, tc.wantPath)
			eq(t, "content type", r.Header.Get("Content-Type"), "application/json")
			for k, v := range tc.want {
				eq(t, k, r.Header.Get(k), v)
			}
		})
	}
}
