package upstream

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// TestRawCallsDeliver: which lines off the wire answer a raw call, and
// what the call gets; everything else is left for the SDK.
func TestRawCallsDeliver(t *testing.T) {
	tests := []struct {
		name      string
		line      string // %s is the pending call's ID
		delivered bool   // taken off the wire (not for the SDK)
		result    string // what the call gets, when answered
		errCode   int64  // or this JSON-RPC error code
		anyErr    bool   // or some other error
	}{
		{name: "result", line: `{"jsonrpc":"2.0","id":"%s","result":{"z":1,"a":[2]}}`, delivered: true, result: `{"z":1,"a":[2]}`},
		{name: "a key after the result", line: `{"jsonrpc":"2.0","id":"%s","result":{"a":"}"},"x":2}`, delivered: true, result: `{"a":"}"}`},
		{name: "keys in any order", line: `{"result":{"content":[]},"id":"%s","jsonrpc":"2.0"}`, delivered: true, result: `{"content":[]}`},
		{name: "error", line: `{"jsonrpc":"2.0","id":"%s","error":{"code":-32602,"message":"bad"}}`, delivered: true, errCode: -32602},
		{name: "null result", line: `{"jsonrpc":"2.0","id":"%s","result":null}`, delivered: true, anyErr: true},
		{name: "the SDK's own response", line: `{"jsonrpc":"2.0","id":7,"result":{"note":"mcp-hub-call-1"}}`},
		{name: "a notification mentioning the ID", line: `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"%s"}}`},
		{name: "a server request with a string ID", line: `{"jsonrpc":"2.0","id":"%s","method":"roots/list"}`},
		{name: "a late answer to a call that gave up", line: `{"jsonrpc":"2.0","id":"mcp-hub-call-999","result":{}}`, delivered: true},
		{name: "not JSON", line: `mcp-hub-call-1 is not json`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var calls rawCalls
			id, reply, err := calls.add()
			if err != nil {
				t.Fatal(err)
			}
			line := strings.ReplaceAll(tc.line, "%s", id)
			if got := calls.deliver([]byte(line)); got != tc.delivered {
				t.Fatalf("deliver(%s) = %v, want %v", line, got, tc.delivered)
			}
			var r rawReply
			select {
			case r = <-reply:
			default:
				if tc.result != "" || tc.errCode != 0 || tc.anyErr {
					t.Fatal("the call got no reply")
				}
				return
			}
			var rpcErr *jsonrpc.Error
			switch {
			case tc.result != "":
				if r.err != nil || string(r.result) != tc.result {
					t.Errorf("reply = %s, %v; want %s", r.result, r.err, tc.result)
				}
			case tc.errCode != 0:
				if !errors.As(r.err, &rpcErr) || rpcErr.Code != tc.errCode {
					t.Errorf("reply error = %v, want code %d", r.err, tc.errCode)
				}
			case tc.anyErr:
				if r.err == nil {
					t.Errorf("reply = %s, want an error", r.result)
				}
			default:
				t.Errorf("unexpected reply %s, %v", r.result, r.err)
			}
		})
	}
}

// TestRawCallsEnd: when the connection ends, waiting calls get its error
// and later ones fail at once.
func TestRawCallsEnd(t *testing.T) {
	var calls rawCalls
	_, reply, _ := calls.add()
	calls.end(mcp.ErrConnectionClosed)
	if r := <-reply; !errors.Is(r.err, mcp.ErrConnectionClosed) {
		t.Errorf("waiting call got %v", r.err)
	}
	if _, _, err := calls.add(); !errors.Is(err, mcp.ErrConnectionClosed) {
		t.Errorf("later call got %v", err)
	}
}

// TestToolCallParams: the hand-written encoding says what encoding/json
// says, on one line, with what the client sent kept as it was.
func TestToolCallParams(t *testing.T) {
	tests := []struct {
		name   string
		params *mcp.CallToolParams
		want   string
	}{
		{"no arguments", &mcp.CallToolParams{Name: "t"}, `{"name":"t"}`},
		{"raw arguments", &mcp.CallToolParams{Name: "t", Arguments: json.RawMessage(`{"q":"<a & b>"}`)}, `{"name":"t","arguments":{"q":"<a & b>"}}`},
		{"pretty arguments", &mcp.CallToolParams{Name: "t", Arguments: json.RawMessage("{\n  \"q\": \"x y\",\n\t\"n\": [1, 2]\n}")}, `{"name":"t","arguments":{"q":"x y","n":[1,2]}}`},
		{"meta", &mcp.CallToolParams{Name: "t", Arguments: json.RawMessage(`{}`), Meta: mcp.Meta{"progressToken": "p-1"}}, `{"name":"t","arguments":{},"_meta":{"progressToken":"p-1"}}`},
		{"name to escape", &mcp.CallToolParams{Name: "a\"b\u00e9", Arguments: json.RawMessage(`{}`)}, `{"name":"a\"bé","arguments":{}}`},
		{"typed arguments", &mcp.CallToolParams{Name: "t", Arguments: map[string]any{"x": 1}}, `{"name":"t","arguments":{"x":1}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := toolCallParams(tc.params)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			line := messageLine("mcp-hub-1", "tools/call", got)
			var msg struct {
				ID     string          `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if strings.Count(string(line), "\n") != 1 || json.Unmarshal(line, &msg) != nil || msg.ID != "mcp-hub-1" || msg.Method != "tools/call" {
				t.Errorf("not one JSON-RPC line: %q", line)
			}
		})
	}
}
