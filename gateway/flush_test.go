package gateway

import (
	"io"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func TestIsResponseEvent(t *testing.T) {
	tests := []struct {
		sse  string
		want bool
	}{
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n", true},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\\\"b\",\"error\":{\"code\":-1,\"message\":\"x\"}}\n\n", true},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":-1.5e3,\"result\":{}}\n\n", true},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n", false},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"sampling/createMessage\",\"params\":{\"result\":1}}\n\n", false},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n", false},
		{"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n", false},
		{"data: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n\n", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := isResponseEvent([]byte(tc.sse)); got != tc.want {
			t.Errorf("isResponseEvent(%q) = %v, want %v", tc.sse, got, tc.want)
		}
	}
}

// TestAnswerInOneWrite: a quick call's answer comes with a Content-Length
// (one write); a call that streams progress first is streamed as before,
// its notifications ahead of its result.
func TestAnswerInOneWrite(t *testing.T) {
	url, hdr := secRawSession(t, fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-features")))

	resp := fixture.Post(t, url, `{"jsonrpc":"2.0","id":"q1","method":"tools/call","params":{"name":"fx__pid","arguments":{}}}`, hdr)
	body, _ := io.ReadAll(resp.Body)
	if resp.ContentLength != int64(len(body)) || !strings.HasPrefix(string(body), `event: message`+"\n"+`data: {"jsonrpc":"2.0","id":"q1","result":`) {
		t.Errorf("quick call: Content-Length %d, body %q; want one event with a Content-Length", resp.ContentLength, body)
	}

	resp = fixture.Post(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fx__progress","arguments":{"steps":2},"_meta":{"progressToken":"tok"}}}`, hdr)
	body, _ = io.ReadAll(resp.Body)
	text := string(body)
	first, result := strings.Index(text, `"progressToken":"tok"`), strings.Index(text, `"id":7,"result"`)
	if resp.ContentLength != -1 || strings.Count(text, "notifications/progress") != 2 || first < 0 || result < first {
		t.Errorf("streamed call: Content-Length %d, body %q; want a chunked stream, progress before the result", resp.ContentLength, text)
	}
}
