package gateway

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// MaxBatchMessages bounds the messages of one JSON-RPC batch (protocol
// versions before 2025-06-18 allow batches; go-sdk refuses them when the
// Mcp-Protocol-Version header names a later one). Past it the batch is
// refused whole with 400.
const MaxBatchMessages = 100

// batchSize is how many requests r carries, for the rate limit: the
// messages of a JSON-RPC batch POSTed to /mcp, the resource URIs of a
// 2026-07-28 subscriptions/listen (listenSize), else 1. Each message of a
// batch is then one request, as if it had come alone, and so is each URI a
// listen subscribes to (each may hold an upstream stream open, as a
// resources/subscribe of its own would). ok is false after an answer was
// written: 413 for a batch over max_request_bytes, 400 for one over
// MaxBatchMessages.
//
// Only the first byte of a body is looked at unless it opens a batch or
// the request is a listen; the body is put back for the handlers after.
func (g *Gateway) batchSize(w http.ResponseWriter, r *http.Request) (n int, ok bool) {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody ||
		(r.URL.Path != "/mcp" && !strings.HasPrefix(r.URL.Path, "/mcp/")) {
		return 1, true
	}
	if g.modernHeader(r) && r.Header.Get("Mcp-Method") == "subscriptions/listen" {
		return g.listenSize(w, r)
	}
	br := bufio.NewReaderSize(r.Body, 16)
	body := readCloser{Reader: br, Closer: r.Body}
	r.Body = body
	first, err := firstNonSpace(br)
	if err != nil || first != '[' {
		return 1, true
	}
	raw, ok := g.readBody(w, r)
	if !ok {
		return 0, false
	}
	var msgs []json.RawMessage
	if json.Unmarshal(raw, &msgs) != nil || len(msgs) == 0 {
		return 1, true // the SDK answers it: a parse error, an empty batch
	}
	if len(msgs) > MaxBatchMessages {
		g.refuse(w, r, "batch_too_large", http.StatusBadRequest, "",
			fmt.Sprintf("Bad Request: a JSON-RPC batch of %d messages is more than the hub takes in one batch (%d); send fewer, or one request at a time", len(msgs), MaxBatchMessages))
		return 0, false
	}
	return len(msgs), true
}

// listenSize is how many resource URIs the subscriptions/listen r names,
// at least 1. A modern request's Mcp-Method header is checked against its
// body by go-sdk, which refuses batches in this era, so the header alone
// picks the requests whose body is read here; a legacy session is refused
// the method (hub). The count is the request's; the hub bounds it
// (protocol.max_listen_uris) once it is paid for.
func (g *Gateway) listenSize(w http.ResponseWriter, r *http.Request) (n int, ok bool) {
	raw, ok := g.readBody(w, r)
	if !ok {
		return 0, false
	}
	var listen struct {
		Params struct {
			Notifications struct {
				ResourceSubscriptions []json.RawMessage `json:"resourceSubscriptions"`
			} `json:"notifications"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &listen) != nil {
		return 1, true // the SDK answers it: a parse error
	}
	return max(1, len(listen.Params.Notifications.ResourceSubscriptions)), true
}

// readBody reads r's whole body, within max_request_bytes, and puts it
// back for the handlers after. ok is false after an answer was written:
// 413 for a body over max_request_bytes, 400 for one that cannot be read.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request) (raw []byte, ok bool) {
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, g.Config().RequestLimit()))
	if err != nil {
		if mbe, is := errors.AsType[*http.MaxBytesError](err); is {
			http.Error(w, fmt.Sprintf("request body exceeds max_request_bytes (%d bytes)", mbe.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "cannot read the request body: "+err.Error(), http.StatusBadRequest)
		}
		return nil, false
	}
	r.Body = readCloser{Reader: bytes.NewReader(raw), Closer: r.Body}
	return raw, true
}

// firstNonSpace peeks at the first byte of br that is not JSON whitespace,
// dropping the whitespace before it. It looks at most maxLeadingSpace bytes
// in (then it reports 0): a body of blanks is the SDK's to refuse, and the
// hub does not read it here.
func firstNonSpace(br *bufio.Reader) (byte, error) {
	for range maxLeadingSpace {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.Discard(1)
		default:
			return b[0], nil
		}
	}
	return 0, nil
}

// maxLeadingSpace bounds the whitespace firstNonSpace skips.
const maxLeadingSpace = 4 << 10
