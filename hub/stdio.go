package hub

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/rpcid"
	"github.com/mcp-hub/mcp-hub/internal/safe"
)

// stdinGuard stands between the client's stdin and the SDK's decoder. It
// passes JSON lines through and answers the others itself: a line that is
// not JSON gets a parse error (-32700), a line longer than
// max_request_bytes an invalid-request error (-32600), both with id null
// as JSON-RPC prescribes when the id cannot be read. The SDK's decoder
// would end the session on either, and in stdio mode the session is the
// hub: one bad line must not stop it.
//
// At the end of stdin it waits up to stdinDrain for the answers to the
// requests still open (out counts them): `printf '...' | mcp-hub serve`
// gets its answers, where the SDK would end the session and drop them.
type stdinGuard struct {
	ctx     context.Context
	src     *bufio.Reader
	closer  io.Closer
	out     *lockedWriter
	max     int
	log     *slog.Logger
	pending []byte // the rest of the current good line
	err     error  // sticky read error, returned once pending is drained
}

// stdinDrain bounds the wait for answers at the end of stdin. Closing stdin
// is also how MCP clients stop a server, and they expect it to exit soon
// (then send SIGTERM): long calls are not waited for.
const stdinDrain = 2 * time.Second

func newStdinGuard(ctx context.Context, r io.ReadCloser, out *lockedWriter, max int, log *slog.Logger) *stdinGuard {
	return &stdinGuard{ctx: ctx, src: bufio.NewReaderSize(r, 64<<10), closer: r, out: out, max: max, log: log}
}

func (g *stdinGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
			if g.err == io.EOF {
				g.out.open.wait(g.ctx, stdinDrain)
			}
			return 0, g.err
		}
		g.pending, g.err = g.nextLine()
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

func (g *stdinGuard) Close() error { return g.closer.Close() }

// nextLine returns the next line to pass on (with its newline), or nil
// after answering a bad one. A panic while reading a line (a bug the
// client's input reached) is answered like a bad line, with an internal
// error: in stdio mode the session is the hub.
func (g *stdinGuard) nextLine() (line []byte, err error) {
	defer safe.Recover(g.log, "reading the client's input", func(p error) {
		line, err = nil, nil
		g.reply(-32603, p.Error())
	})
	return g.readLine()
}

func (g *stdinGuard) readLine() ([]byte, error) {
	var line []byte
	size := 0
	for {
		chunk, err := g.src.ReadSlice('\n')
		size += len(chunk)
		if size <= g.max+2 { // the newline (and a \r) do not count
			line = append(line, chunk...)
		} else {
			line = nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && size == 0 {
			return nil, err
		}
		body := bytes.TrimSpace(line)
		switch {
		case size > g.max+2:
			g.log.Warn("client request too large; rejected", "bytes", size, "max_request_bytes", g.max)
			g.reply(-32600, fmt.Sprintf("request too large: %d bytes exceeds max_request_bytes (%d)", size, g.max))
			return nil, err
		case len(body) == 0:
			return nil, err
		case !json.Valid(body):
			g.log.Warn("client sent a line that is not JSON; answered with a parse error", "bytes", size)
			g.reply(-32700, "parse error: the line is not valid JSON")
			return nil, err
		}
		g.out.open.read(body)
		if line[len(line)-1] != '\n' {
			line = append(line, '\n')
		}
		return line, err
	}
}

func (g *stdinGuard) reply(code int, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{"code": code, "message": msg}})
	g.out.Write(append(b, '\n'))
}

// lockedWriter makes each Write atomic: the SDK writes one message per
// Write, and the guard's answers must not land inside one. It also logs
// the requests the SDK refuses before any hub code sees them (an unknown
// method, params that do not decode): the session's logErrors middleware
// logs everything else.
type lockedWriter struct {
	mu   sync.Mutex
	w    io.WriteCloser
	log  *slog.Logger
	open openRequests
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.note(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// note does the bookkeeping of an answer: a panic in it must not stop
// the answer.
func (l *lockedWriter) note(p []byte) {
	defer safe.Recover(l.log, "writing an answer to the client", nil)
	if l.log != nil && bytes.Contains(p, []byte(`"error":{"code":-3260`)) {
		l.logRefusal(p)
	}
	l.open.written(p)
}

func (l *lockedWriter) logRefusal(p []byte) {
	var resp struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(p, &resp) != nil {
		return
	}
	if resp.Error.Code == -32601 || bytes.HasPrefix([]byte(resp.Error.Message), []byte("handling '")) {
		l.log.Info("client request refused", "code", resp.Error.Code, "err", resp.Error.Message)
	}
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// openRequests are the client's requests not answered yet, keyed by id.
type openRequests struct {
	mu       sync.Mutex
	ids      map[string]bool
	answered chan struct{} // closed (and replaced) when one is answered
}

// read notes a request, or the client cancelling one (which then gets no
// answer), from a line the client sent.
func (o *openRequests) read(line []byte) {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			RequestID json.RawMessage `json:"requestId"`
		} `json:"params"`
	}
	if line[0] != '{' || json.Unmarshal(line, &msg) != nil || msg.Method == "" {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if key, ok := idKey(msg.ID); ok {
		if o.ids == nil {
			o.ids = map[string]bool{}
		}
		o.ids[key] = true
	}
	if key, ok := idKey(msg.Params.RequestID); ok && msg.Method == "notifications/cancelled" {
		o.closeLocked(key)
	}
}

// written notes an answer the SDK sends, as it encodes them:
// {"jsonrpc":"2.0","id":ID,"result"|"error"...
func (o *openRequests) written(p []byte) {
	rest, ok := bytes.CutPrefix(p, []byte(`{"jsonrpc":"2.0","id":`))
	if !ok {
		return
	}
	n := rpcid.Len(rest)
	if n == 0 || !(bytes.HasPrefix(rest[n:], []byte(`,"result":`)) || bytes.HasPrefix(rest[n:], []byte(`,"error":`))) {
		return
	}
	if key, ok := idKey(rest[:n]); ok {
		o.mu.Lock()
		o.closeLocked(key)
		o.mu.Unlock()
	}
}

func (o *openRequests) closeLocked(key string) {
	if !o.ids[key] {
		return
	}
	delete(o.ids, key)
	if o.answered != nil {
		close(o.answered)
		o.answered = nil
	}
}

// wait returns when every request is answered, ctx ends or limit passes.
func (o *openRequests) wait(ctx context.Context, limit time.Duration) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	for {
		o.mu.Lock()
		if len(o.ids) == 0 {
			o.mu.Unlock()
			return
		}
		if o.answered == nil {
			o.answered = make(chan struct{})
		}
		answered := o.answered
		o.mu.Unlock()
		select {
		case <-answered:
		case <-ctx.Done():
			return
		case <-timer.C:
			return
		}
	}
}

// idKey makes a JSON-RPC id comparable however it was spelled: 7, 7.0 and
// 7e0 are one id, as are "a" and "\u0061". Null and other values are none.
func idKey(raw json.RawMessage) (string, bool) {
	var id any
	if len(raw) == 0 || json.Unmarshal(raw, &id) != nil {
		return "", false
	}
	switch id := id.(type) {
	case string:
		return "s" + id, true
	case float64:
		return "n" + strconv.FormatFloat(id, 'g', -1, 64), true
	}
	return "", false
}
