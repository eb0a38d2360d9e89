package gateway

import (
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
// messages of a JSON-RPC batch POSTed to /mcp, else 1. Each message of a
// batch is then one request, as if it had come alone. ok is false after an
// answer was written: 413 for a batch over max_request_bytes, 400 for one
// over MaxBatchMessages.
//
// Only the first byte of a body is looked at unless it opens a batch; the
// body is put back for the handlers after.
func (g *Gateway) batchSize(w http.ResponseWriter, r *http.Request) (n int, ok bool) {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody ||
		(r.URL.Path != "/mcp" && !strings.HasPrefix(r.URL.Path, "/mcp/")) {
		return 1, true
	}
	body := &peekBody{r: r.Body}
	r.Body = body
	first, err := body.firstNonSpace()
	if err != nil || first != '[' {
		return 1, true
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, body, g.Config().RequestLimit()))
	if err != nil {
		if mbe, is := errors.AsType[*http.MaxBytesError](err); is {
			http.Error(w, fmt.Sprintf("request body exceeds max_request_bytes (%d bytes)", mbe.Limit), http.StatusRequestEntityTooLarge)
		} else {
			http.Error(w, "cannot read the request body: "+err.Error(), http.StatusBadRequest)
		}
		return 0, false
	}
	r.Body = readCloser{Reader: bytes.NewReader(raw), Closer: body}
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

// peekBody is a request body whose first non-space byte has been looked
// at and is read again: one allocation, where a bufio.Reader took three.
type peekBody struct {
	r    io.ReadCloser
	b    [1]byte
	held bool // b is still to be read
}

// firstNonSpace reads up to the first byte of the body that is not JSON
// whitespace and keeps it to be read again; the whitespace is dropped.
func (p *peekBody) firstNonSpace() (byte, error) {
	for range maxLeadingSpace {
		n, err := p.r.Read(p.b[:])
		if n == 1 {
			switch p.b[0] {
			case ' ', '\t', '\r', '\n':
				continue
			}
			p.held = true
			return p.b[0], nil
		}
		if err != nil {
			return 0, err
		}
	}
	return 0, nil
}

func (p *peekBody) Read(b []byte) (int, error) {
	if p.held && len(b) > 0 {
		p.held = false
		b[0] = p.b[0]
		return 1, nil
	}
	return p.r.Read(b)
}

func (p *peekBody) Close() error { return p.r.Close() }

// maxLeadingSpace bounds the whitespace firstNonSpace skips.
const maxLeadingSpace = 4 << 10
