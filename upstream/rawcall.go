package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// RawResult is a result passed on as the upstream wrote it. It satisfies
// mcp.Result and marshals to exactly those bytes, so the hub's server
// sends the upstream's answer without decoding and re-encoding it: for a
// proxy that only forwards, that round trip through Go types was most of
// its work per call.
//
// Its Meta is not sent: the SDK only sets it on results of draft protocol
// versions, which the hub does not offer.
type RawResult struct {
	mcp.ResultBase
	JSON json.RawMessage
}

func (r *RawResult) MarshalJSON() ([]byte, error) { return r.JSON, nil }

// rawIDPrefix starts the IDs of raw calls. The SDK's client numbers its
// requests, so a string ID can never be one of its own; and it differs
// from the hub's progress tokens (mcp-hub-N), which notifications carry.
const rawIDPrefix = "mcp-hub-call-"

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
	if id, result, ok := cutResult(line); ok {
		// The common shape: the ID looked up without a copy, the result
		// copied once (line is the reader's buffer).
		r.mu.Lock()
		ch, ok := r.pending[string(id)]
		delete(r.pending, string(id))
		r.mu.Unlock()
		if !ok {
			return bytes.HasPrefix(id, []byte(rawIDPrefix))
		}
		if bytes.Equal(result, []byte("null")) {
			ch <- rawReply{err: errors.New("the server answered with neither a result nor an error")}
		} else {
			ch <- rawReply{result: bytes.Clone(result)}
		}
		return true
	}
	msg, ok := parseReply(line)
	if !ok {
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

// fail fails the raw call with this JSON id (still quoted) with err, and
// reports whether the id is a raw call's: answered now, or given up on.
func (r *rawCalls) fail(rawID json.RawMessage, err error) bool {
	var id string
	if json.Unmarshal(rawID, &id) != nil || !strings.HasPrefix(id, rawIDPrefix) {
		return false
	}
	r.mu.Lock()
	ch, ok := r.pending[id]
	delete(r.pending, id)
	r.mu.Unlock()
	if ok {
		ch <- rawReply{err: err}
	}
	return true
}

// reply is a response line taken apart.
type reply struct {
	ID     *string         `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// parseReply reads a response with a string ID. The shape most servers
// write, {"jsonrpc":"2.0","id":"…","result":…}, is cut apart and its result
// only validated, not decoded; any other is decoded.
func parseReply(line []byte) (reply, bool) {
	if id, result, ok := cutResult(line); ok {
		s := string(id)
		return reply{ID: &s, Result: bytes.Clone(result)}, true
	}
	var msg reply
	if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != "" {
		return reply{}, false
	}
	return msg, true
}

// cutResult cuts a response of the shape most servers write,
// {"jsonrpc":"2.0","id":"…","result":…}, into its ID (unquoted) and its
// result, which is validated, not decoded; both point into line.
func cutResult(line []byte) (id, result []byte, ok bool) {
	rest, ok := bytes.CutPrefix(line, []byte(`{"jsonrpc":"2.0","id":"`))
	if !ok {
		return nil, nil, false
	}
	id, rest, ok = bytes.Cut(rest, []byte(`","result":`))
	if !ok || !plainString(string(id)) {
		return nil, nil, false
	}
	result, ok = bytes.CutSuffix(rest, []byte("}"))
	if !ok || !json.Valid(result) {
		return nil, nil, false
	}
	return id, result, true
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

// messageLine encodes a request (or, without id, a notification) as one
// line. IDs and method names are the hub's own plain ASCII; params are
// JSON already, compacted so that a pretty-printed argument cannot break
// the line framing.
func messageLine(id, method string, params json.RawMessage) []byte {
	b := make([]byte, 0, 64+len(params))
	b = append(b, `{"jsonrpc":"2.0",`...)
	if id != "" {
		b = append(b, `"id":"`...)
		b = append(b, id...)
		b = append(b, `",`...)
	}
	b = append(b, `"method":"`...)
	b = append(b, method...)
	b = append(b, `","params":`...)
	b = appendCompact(b, params)
	return append(b, "}\n"...)
}

func appendCompact(b []byte, js []byte) []byte {
	if !bytes.ContainsAny(js, "\r\n\t ") {
		return append(b, js...)
	}
	buf := bytes.NewBuffer(b)
	if json.Compact(buf, js) != nil {
		return append(b, js...) // invalid JSON is the encoder's error to report
	}
	return buf.Bytes()
}

// toolCallParams encodes tools/call params. The common shape (raw
// arguments, an optional _meta) is written by hand: encoding/json's
// reflection over mcp.CallToolParams was 5% of the hub's CPU per
// proxied call. Anything else takes encoding/json.
func toolCallParams(p *mcp.CallToolParams) (json.RawMessage, error) {
	args, raw := p.Arguments.(json.RawMessage)
	if p.Arguments == nil {
		raw = true
	}
	if !raw || !plainString(p.Name) || p.InputResponses != nil || p.RequestState != "" {
		return marshalNoEscape(p)
	}
	b := make([]byte, 0, 32+len(p.Name)+len(args))
	b = append(b, `{"name":"`...)
	b = append(b, p.Name...)
	b = append(b, '"')
	if len(args) > 0 {
		b = append(b, `,"arguments":`...)
		b = appendCompact(b, args)
	}
	if len(p.Meta) > 0 {
		meta, err := marshalNoEscape(p.Meta)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"_meta":`...)
		b = append(b, meta...)
	}
	return append(b, '}'), nil
}

// plainString reports whether s can be written between quotes as it is.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// marshalNoEscape is json.Marshal that leaves <, > and & alone, so that
// what a client sent reaches the server as it was.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
