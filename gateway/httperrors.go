package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
)

// jsonRPCErrors makes the answers to bad HTTP requests JSON-RPC errors and
// logs each once. The SDK answers a request it cannot take (a body that is
// not JSON, an unknown method, a missing session, a body over the limit)
// with a plain-text 4xx before any hub code sees it; clients parse
// JSON-RPC, and operators should see what was refused.
//
// Only plain-text error answers are rewritten: the status code stays, the
// body becomes {"jsonrpc":"2.0","id":<the request's id or null>,"error":{...}}.
// Everything else passes through untouched, streaming included.
func (g *Gateway) jsonRPCErrors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ew := &errorWriter{ResponseWriter: w}
		if r.Body != nil && r.Body != http.NoBody {
			ew.head.r = r.Body
			r.Body = &ew.head
		}
		next.ServeHTTP(ew, r)
		if ew.held {
			g.rewriteRefusal(w, r, ew, ew.head.Bytes())
		}
	})
}

// rewriteRefusal sends the refusal ew held back as a JSON-RPC error. It is
// a function of its own to keep jsonRPCErrors' stack frame small: a held
// GET stream sits below it, and with less of its stack in use the garbage
// collector can halve that stack.
func (g *Gateway) rewriteRefusal(w http.ResponseWriter, r *http.Request, ew *errorWriter, head []byte) {
	msg := strings.TrimSpace(ew.body.String())
	g.log.Info("client request refused", "status", ew.status, "path", r.URL.Path, "err", g.redact.String(msg))
	body, _ := json.Marshal(errorResponse{
		JSONRPC: "2.0",
		ID:      requestID(head),
		Error:   jsonrpc.Error{Code: rpcCode(ew.status, msg), Message: msg},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("X-Content-Type-Options")
	w.WriteHeader(ew.status)
	w.Write(body)
}

// rpcCode picks the JSON-RPC error code for an SDK refusal.
func rpcCode(status int, msg string) int64 {
	switch {
	case strings.HasPrefix(msg, "malformed payload"):
		return jsonrpc.CodeParseError
	case strings.Contains(msg, "not handled") || strings.Contains(msg, "unsupported"):
		return jsonrpc.CodeMethodNotFound
	case status == http.StatusNotFound:
		return -32001 // session not found: re-initialize
	}
	return jsonrpc.CodeInvalidRequest
}

type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   jsonrpc.Error   `json:"error"`
}

// requestID returns the raw id of a single JSON-RPC request, or null when
// it cannot be read (JSON-RPC's rule for parse errors).
func requestID(body []byte) json.RawMessage {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &req) != nil || len(req.ID) == 0 {
		return json.RawMessage("null")
	}
	return req.ID
}

// errorWriter holds back a plain-text error answer so that it can be
// rewritten; any other answer goes straight through.
//
// It holds the request body's first bytes too (head), in the same
// allocation.
type errorWriter struct {
	http.ResponseWriter
	status int
	held   bool
	body   bytes.Buffer
	head   prefixBuffer
}

func (w *errorWriter) WriteHeader(status int) {
	if status >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status, w.held = status, true
		return
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *errorWriter) Write(p []byte) (int, error) {
	if w.held {
		if w.body.Len() < 4096 {
			w.body.Write(p)
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the real writer (Flush for SSE).
func (w *errorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// prefixBuffer is a request body that keeps the first 64 KiB read through
// it: enough to read a request's id without holding a large body twice.
type prefixBuffer struct {
	bytes.Buffer
	r io.ReadCloser
}

func (b *prefixBuffer) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if room := 64<<10 - b.Len(); room > 0 && n > 0 {
		b.Buffer.Write(p[:min(n, room)])
	}
	return n, err
}

func (b *prefixBuffer) Close() error { return b.r.Close() }

type readCloser struct {
	io.Reader
	io.Closer
}
