package upstream

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// wireTap sees every message an upstream connection reads, before the SDK
// decodes it, for two things the SDK's API cannot give a proxy:
//   - counting log and progress notifications (see notificationCounter);
//   - keeping tool schemas as the upstream wrote them (see rawSchemas).
type wireTap struct {
	counter *notificationCounter
	schemas *rawSchemas
}

// read taps one decoded JSON-RPC message.
func (t *wireTap) read(msg jsonrpc.Message) {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if !m.IsCall() && (m.Method == NotifyLog || m.Method == NotifyProgress) {
			t.counter.sawOne()
		}
	case *jsonrpc.Response:
		t.schemas.observe(m.Result)
	}
}

// readSSE taps the data of one server-sent event (streamable HTTP).
func (t *wireTap) readSSE(data []byte) {
	if !bytes.Contains(data, []byte("notifications/")) && !bytes.Contains(data, []byte(`"tools"`)) {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(data, &msg) != nil {
		return
	}
	switch {
	case msg.ID == nil && (msg.Method == NotifyLog || msg.Method == NotifyProgress):
		t.counter.sawOne()
	case msg.Result != nil:
		t.schemas.observe(msg.Result)
	}
}

// rawSchemas keeps each tool's input and output schema as the upstream
// sent them. The go-sdk client decodes a schema into a Go map, which
// sorts its keys: properties would reach clients, and search_tools'
// parameter list, in alphabetical rather than the author's order.
type rawSchemas struct {
	mu      sync.Mutex
	in, out map[string]json.RawMessage
}

// observe records the schemas in a tools/list result; other results are
// ignored after a cheap check.
func (r *rawSchemas) observe(result json.RawMessage) {
	if !bytes.Contains(result, []byte(`"tools"`)) {
		return
	}
	var page struct {
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &page) != nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.in == nil {
		r.in, r.out = map[string]json.RawMessage{}, map[string]json.RawMessage{}
	}
	for _, t := range page.Tools {
		r.in[t.Name] = t.InputSchema
		r.out[t.Name] = t.OutputSchema
	}
}

// apply puts the recorded schemas back on tools the SDK decoded.
func (r *rawSchemas) apply(tools []*mcp.Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range tools {
		if raw := r.in[t.Name]; len(raw) > 0 {
			t.InputSchema = raw
		}
		if raw := r.out[t.Name]; len(raw) > 0 && t.OutputSchema != nil {
			t.OutputSchema = raw
		}
	}
}
