package gateway

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/mcp-hub/mcp-hub/internal/rpcid"
)

// answerInOneWrite sends the answer to a POST of one JSON-RPC request in a
// single write when it is ready at the first flush, as it is for every
// quick call. The SDK answers over server-sent events and flushes after
// each event: left alone, a tools/call took two writes (headers and the
// event, then the end of a chunked body), and the client could not reuse
// its connection before the second arrived. Held back until the SDK's
// handler returns, which it does as soon as it has delivered that
// response, an answer that is the response itself goes out with a
// Content-Length, as one write.
//
// That write happens on the request's own goroutine, not on the SDK's
// goroutine that flushed: that one runs the whole call and is one level
// short of stack for net/http's writing, so writing there made Go copy its
// stack on nearly every call (10% of the hub's CPU at one session).
//
// Anything else is untouched: a first event that is not the response (a
// progress or log notification, a sampling request) is flushed at once and
// the rest of the stream follows as the SDK writes it; GET streams,
// batches and notifications pass straight through.
func answerInOneWrite(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		serveInOneWrite(next, w, r)
	})
}

// serveInOneWrite is answerInOneWrite for a POST: apart, so that the frame
// a held GET stream keeps below it stays small (see jsonRPCErrors).
// The writer and the body it watches are one allocation.
func serveInOneWrite(next http.Handler, w http.ResponseWriter, r *http.Request) {
	aw := &oneWriteAnswer{ResponseWriter: w, holding: true}
	aw.body.r = r.Body
	r.Body = &aw.body
	defer aw.release()
	next.ServeHTTP(aw, r)
}

// oneWriteAnswer holds the answer back until the first flush or the end of
// the handler. The mutex orders the SDK's writes, from its own goroutines,
// with the release when the handler returns.
type oneWriteAnswer struct {
	http.ResponseWriter
	body firstByte // the request body, read through it

	mu      sync.Mutex
	holding bool
	status  int
	buf     bytes.Buffer
}

func (w *oneWriteAnswer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holding {
		return w.buf.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

func (w *oneWriteAnswer) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holding {
		if w.status == 0 {
			w.status = status
		}
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *oneWriteAnswer) FlushError() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holding && w.answered() {
		return nil // release sends it, when the handler returns
	}
	w.releaseLocked()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// answered reports whether what is held is the whole answer: the response
// to the one request of the POST.
func (w *oneWriteAnswer) answered() bool {
	return w.body.b == '{' && isResponseEvent(w.buf.Bytes())
}

func (w *oneWriteAnswer) Flush() { w.FlushError() }

// release sends what is held when the handler returns; net/http finishes
// the response.
func (w *oneWriteAnswer) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.releaseLocked()
}

func (w *oneWriteAnswer) releaseLocked() {
	if !w.holding {
		return
	}
	w.holding = false
	if w.answered() {
		w.Header().Set("Content-Length", strconv.Itoa(w.buf.Len()))
	}
	if w.status != 0 {
		w.ResponseWriter.WriteHeader(w.status)
	}
	if w.buf.Len() > 0 {
		w.ResponseWriter.Write(w.buf.Bytes())
	}
}

// Unwrap lets http.ResponseController reach the real writer for the rest
// (deadlines, hijacking).
func (w *oneWriteAnswer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// isResponseEvent reports whether sse is exactly one server-sent event
// carrying a JSON-RPC response: {"jsonrpc":"2.0","id":ID,"result"|"error"...
// as the SDK encodes it. Anything else (another shape, more events) is not
// taken for the end of the answer.
func isResponseEvent(sse []byte) bool {
	data, ok := bytes.CutPrefix(sse, []byte("event: message\ndata: "))
	if !ok || !bytes.HasSuffix(data, []byte("\n\n")) || bytes.Count(data, []byte("\n")) != 2 {
		return false
	}
	rest, ok := bytes.CutPrefix(data, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		return false
	}
	n := rpcid.Len(rest)
	if n == 0 {
		return false
	}
	rest = rest[n:]
	return bytes.HasPrefix(rest, []byte(`,"result":`)) || bytes.HasPrefix(rest, []byte(`,"error":`))
}

// firstByte notes the first non-space byte read through it: the request
// body was one JSON object if it is '{'.
type firstByte struct {
	r io.ReadCloser
	b byte
}

func (f *firstByte) Close() error { return f.r.Close() }

func (f *firstByte) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.b == 0 {
		if t := bytes.TrimLeft(p[:n], " \t\r\n"); len(t) > 0 {
			f.b = t[0]
		}
	}
	return n, err
}
