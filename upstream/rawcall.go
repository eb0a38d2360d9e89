package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RawResult is a result passed on as the upstream wrote it. It satisfies
// mcp.Result and marshals to exactly those bytes, so the hub's server
// sends the upstream's answer without decoding and re-encoding it: for a
// proxy that only forwards, that round trip through Go types (and the
// SDK's 32 KiB decoder buffer per unmarshal) was most of its work per call.
//
// Its Meta is not sent: the SDK only sets it on results of draft protocol
// versions, which the hub does not offer.
type RawResult struct {
	mcp.ResultBase
	JSON json.RawMessage
}

func (r *RawResult) MarshalJSON() ([]byte, error) { return r.JSON, nil }

// IsError reports whether a tools/call result has isError set.
func IsError(res mcp.Result) bool {
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r.IsError
	case *RawResult:
		if !bytes.Contains(r.JSON, []byte(`"isError"`)) {
			return false
		}
		var top struct {
			IsError bool `json:"isError"`
		}
		return json.Unmarshal(r.JSON, &top) == nil && top.IsError
	}
	return false
}

// rawIDPrefix starts the IDs of raw calls. The SDK's client numbers its
// requests, so a string ID can never be one of its own.
const rawIDPrefix = "mcp-hub-"

// rawCalls are the requests a connection sends for the hub itself, outside
// the SDK's client, and waits for by ID. Everything else on the connection
// (notifications, server-to-client requests, the SDK's own calls) goes
// through the SDK as before, in wire order.
type rawCalls struct {
	mu      sync.Mutex
	next    uint64
	pending map[string]chan rawReply
	ended   error // why the connection ended; no new calls after
}

type rawReply struct {
	result json.RawMessage
	err    error
}

// add registers a new call and returns its ID and where its reply arrives.
func (r *rawCalls) add() (string, chan rawReply, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended != nil {
		return "", nil, r.ended
	}
	if r.pending == nil {
		r.pending = map[string]chan rawReply{}
	}
	r.next++
	id := rawIDPrefix + strconv.FormatUint(r.next, 10)
	ch := make(chan rawReply, 1)
	r.pending[id] = ch
	return id, ch, nil
}

// remove forgets a call and reports whether it was still waiting.
func (r *rawCalls) remove(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.pending[id]
	delete(r.pending, id)
	return ok
}

// deliver hands a message read off the wire to the raw call it answers, and
// reports whether it did; other messages are for the SDK. A late answer to
// a raw call that gave up is dropped here too: the SDK would not know it.
func (r *rawCalls) deliver(line []byte) bool {
	if !bytes.Contains(line, []byte(`"`+rawIDPrefix)) {
		return false
	}
	var msg struct {
		ID     *string         `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != "" {
		return false
	}
	r.mu.Lock()
	ch, ok := r.pending[*msg.ID]
	delete(r.pending, *msg.ID)
	r.mu.Unlock()
	if !ok {
		return strings.HasPrefix(*msg.ID, rawIDPrefix)
	}
	switch {
	case msg.Error != nil:
		ch <- rawReply{err: msg.Error}
	case len(msg.Result) == 0 || bytes.Equal(msg.Result, []byte("null")):
		ch <- rawReply{err: errors.New("the server answered with neither a result nor an error")}
	default:
		ch <- rawReply{result: msg.Result}
	}
	return true
}

// end fails every waiting call with err, and every later one.
func (r *rawCalls) end(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ended != nil {
		return
	}
	r.ended = err
	for id, ch := range r.pending {
		ch <- rawReply{err: err}
		delete(r.pending, id)
	}
}
