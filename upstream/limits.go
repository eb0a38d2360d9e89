package upstream

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"

	"github.com/mcp-hub/mcp-hub/internal/rpcid"
)

// Result size. One message an upstream sends (a tool result, a page of a
// list, a notification) is bounded by Options.MaxResultBytes (the config's
// max_result_bytes), counted as its JSON-RPC encoding. Past the limit only
// that call fails: the message is read to its end and dropped, and the
// call it answers gets a *ResultTooLargeError (a JSON-RPC error with
// CodeResultTooLarge for the SDK's own calls). The connection stays up.
//
// The call is found by the id the answer carries, at the start of the
// message where servers write it ({"jsonrpc":"2.0","id":7,"result":...}),
// or at its end ({"result":...,"jsonrpc":"2.0","id":7}); an HTTP answer in
// JSON is known by the request it answers. A message too large whose id
// cannot be read is dropped, and its call times out.

// CodeResultTooLarge is the JSON-RPC error code of a response the hub
// dropped for its size.
const CodeResultTooLarge = -32013

// ResultTooLargeError is a call whose answer was over the limit.
type ResultTooLargeError struct {
	Server string
	Limit  int64
}

func (e *ResultTooLargeError) Error() string {
	return fmt.Sprintf("the result from server '%s' is larger than max_result_bytes (%d bytes) and was dropped; only this call failed. "+
		"Ask the tool for less, or raise max_result_bytes in the config", e.Server, e.Limit)
}

// rpcError is the JSON-RPC form of e, for calls the SDK's client makes.
func (e *ResultTooLargeError) rpcError() *jsonrpc.Error {
	return &jsonrpc.Error{Code: CodeResultTooLarge, Message: e.Error()}
}

// tooLargeResponse is the JSON-RPC message that stands in for a dropped
// answer to the request with this id.
func tooLargeResponse(id json.RawMessage, e *ResultTooLargeError) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e.rpcError()})
	return b
}

// edge is how much of the start and end of a dropped message is kept to
// find its id.
const edge = 256

// droppedID finds the id of a response from the first and last bytes of
// its encoding: {"jsonrpc":"2.0","id":ID,"result"|"error" at the start, or
// ,"id":ID} at the end. ok is false for anything else, requests and
// notifications included.
func droppedID(head, tail []byte) (id json.RawMessage, ok bool) {
	head = bytes.TrimLeft(head, " \t\r\n")
	for _, prefix := range []string{`{"jsonrpc":"2.0","id":`, `{"id":`} {
		if rest, found := bytes.CutPrefix(head, []byte(prefix)); found {
			n := rpcid.Len(rest)
			if n > 0 && isAnswerKey(rest[n:]) {
				return bytes.Clone(rest[:n]), true
			}
		}
	}
	tail = bytes.TrimRight(tail, " \t\r\n")
	if rest, found := bytes.CutSuffix(tail, []byte("}")); found && (bytes.Contains(head, []byte(`"result"`)) || bytes.Contains(head, []byte(`"error"`))) {
		i := bytes.LastIndex(rest, []byte(`"id":`))
		if i >= 0 {
			v := rest[i+len(`"id":`):]
			if n := rpcid.Len(v); n > 0 && n == len(v) {
				return bytes.Clone(v), true
			}
		}
	}
	return nil, false
}

// isAnswerKey reports whether b continues a message after its id with the
// key of a response: the jsonrpc member, a result or an error.
func isAnswerKey(b []byte) bool {
	for _, k := range []string{`,"result":`, `,"error":`, `,"jsonrpc":"2.0","result":`, `,"jsonrpc":"2.0","error":`} {
		if bytes.HasPrefix(b, []byte(k)) {
			return true
		}
	}
	return false
}

// ringTail keeps the last edge bytes written to it.
type ringTail struct{ b []byte }

func (r *ringTail) write(p []byte) {
	if len(p) >= edge {
		r.b = append(r.b[:0], p[len(p)-edge:]...)
		return
	}
	r.b = append(r.b, p...)
	if len(r.b) > edge {
		r.b = append(r.b[:0], r.b[len(r.b)-edge:]...)
	}
}

// limitRoundTripper bounds what the SDK reads from an HTTP upstream: each
// server-sent event, and each JSON body, by limit. An answer over it is
// replaced by a JSON-RPC error for its request (tooLargeResponse).
type limitRoundTripper struct {
	base   http.RoundTripper
	limit  int64
	server string
	// dropped reports a message dropped without an id to fail.
	dropped func(size int64)
}

func (t *limitRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	tooLarge := &ResultTooLargeError{Server: t.server, Limit: t.limit}
	switch ct := resp.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "text/event-stream"):
		resp.Body = &sseLimitBody{src: bufio.NewReaderSize(resp.Body, 64<<10), closer: resp.Body, limit: t.limit, tooLarge: tooLarge, dropped: t.dropped}
	case strings.HasPrefix(ct, "application/json"):
		resp.Body = &jsonLimitBody{src: resp.Body, limit: t.limit, tooLarge: tooLarge, req: req}
		resp.ContentLength = -1
	default:
		// Error pages and the like: the SDK reads them whole.
		resp.Body = readCloser{Reader: io.LimitReader(resp.Body, t.limit), Closer: resp.Body}
	}
	return resp, nil
}

type readCloser struct {
	io.Reader
	io.Closer
}

// jsonLimitBody reads a JSON answer whole, up to the limit; one over it
// becomes the error answer to the request it was for.
type jsonLimitBody struct {
	src      io.ReadCloser
	limit    int64
	tooLarge *ResultTooLargeError
	req      *http.Request
	r        *bytes.Reader // the answer, once read
	err      error
}

func (b *jsonLimitBody) Read(p []byte) (int, error) {
	if b.r == nil {
		data, err := io.ReadAll(io.LimitReader(b.src, b.limit+1))
		if int64(len(data)) > b.limit {
			b.src.Close()
			id, ok := requestID(b.req)
			if !ok {
				id, ok = droppedID(data[:min(len(data), edge)], nil)
			}
			if !ok {
				id = json.RawMessage("null")
			}
			data, err = tooLargeResponse(id, b.tooLarge), nil
		}
		b.r, b.err = bytes.NewReader(data), err
	}
	n, err := b.r.Read(p)
	if err == io.EOF && b.err != nil {
		err = b.err
	}
	return n, err
}

func (b *jsonLimitBody) Close() error { return b.src.Close() }

// requestID reads the id of the JSON-RPC request a POST carried.
func requestID(req *http.Request) (json.RawMessage, bool) {
	if req == nil || req.GetBody == nil {
		return nil, false
	}
	body, err := req.GetBody()
	if err != nil {
		return nil, false
	}
	defer body.Close()
	var msg struct {
		ID json.RawMessage `json:"id"`
	}
	if json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&msg) != nil || len(msg.ID) == 0 {
		return nil, false
	}
	return msg.ID, true
}

// sseLimitBody passes a server-sent event stream on event by event,
// holding each event until it ends. An event over the limit is dropped as
// it streams in; in its place comes an event with the error answer to the
// request it answered, keeping its id: and event: fields.
type sseLimitBody struct {
	src      *bufio.Reader
	closer   io.Closer
	limit    int64
	tooLarge *ResultTooLargeError
	dropped  func(size int64)

	out   bytes.Buffer // complete events, ready to be read
	event bytes.Buffer // the event being read
	size  int64        // bytes of the event being read
	over  bool         // the event is over the limit: its data is dropped
	head  []byte       // the start of its data
	tail  ringTail     // the end of its data
	keep  [][]byte     // its fields other than data
	err   error
}

func (b *sseLimitBody) Read(p []byte) (int, error) {
	for b.out.Len() == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.err = b.readLine()
	}
	return b.out.Read(p)
}

func (b *sseLimitBody) Close() error { return b.closer.Close() }

// readLine moves one line (or a piece of one too long to hold) from src
// to the event, and completes the event at a blank line or at the end.
func (b *sseLimitBody) readLine() error {
	frag, err := b.src.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		err = nil
	}
	b.size += int64(len(frag))
	start := b.event.Len() == 0 || b.event.Bytes()[b.event.Len()-1] == '\n'
	blank := start && (len(frag) == 0 || bytes.Equal(frag, []byte("\n")) || bytes.Equal(frag, []byte("\r\n")))
	switch {
	case blank && b.over:
	case !b.over:
		b.event.Write(frag)
		if b.size > b.limit {
			b.overflow()
		}
	case len(frag) > 0:
		if start && !bytes.HasPrefix(frag, []byte("data")) {
			b.keep = append(b.keep, bytes.Clone(frag[:min(len(frag), edge)]))
		} else {
			b.tail.write(bytes.TrimPrefix(bytes.TrimPrefix(frag, []byte("data:")), []byte(" ")))
		}
		b.event.Reset()
		b.event.WriteByte(frag[len(frag)-1])
	}
	if blank || err != nil {
		b.endEvent()
	}
	return err
}

// overflow switches the current event to dropping: its head and fields
// other than data are kept to answer for it.
func (b *sseLimitBody) overflow() {
	b.over = true
	for _, line := range bytes.SplitAfter(b.event.Bytes(), []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("data")):
			data := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if b.head == nil {
				b.head = bytes.Clone(data[:min(len(data), edge)])
			}
			b.tail.write(data)
		case len(line) > 0:
			b.keep = append(b.keep, bytes.Clone(line[:min(len(line), edge)]))
		}
	}
	last := b.event.Bytes()
	b.event.Reset()
	if len(last) > 0 {
		b.event.WriteByte(last[len(last)-1])
	}
}

func (b *sseLimitBody) endEvent() {
	if !b.over {
		b.out.Write(b.event.Bytes())
	} else {
		if id, ok := droppedID(b.head, b.tail.b); ok {
			for _, f := range b.keep {
				b.out.Write(f)
			}
			b.out.WriteString("data: ")
			b.out.Write(tooLargeResponse(id, b.tooLarge))
			b.out.WriteString("\n\n")
		} else if b.dropped != nil {
			b.dropped(b.size)
		}
	}
	b.event.Reset()
	b.size, b.over, b.head, b.tail.b, b.keep = 0, false, nil, b.tail.b[:0], nil
}
