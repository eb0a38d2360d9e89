package hub

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// stdinGuard stands between the client's stdin and the SDK's decoder. It
// passes JSON lines through and answers the others itself: a line that is
// not JSON gets a parse error (-32700), a line longer than
// max_request_bytes an invalid-request error (-32600), both with id null
// as JSON-RPC prescribes when the id cannot be read. The SDK's decoder
// would end the session on either, and in stdio mode the session is the
// hub: one bad line must not stop it.
type stdinGuard struct {
	src     *bufio.Reader
	closer  io.Closer
	out     *lockedWriter
	max     int
	log     *slog.Logger
	pending []byte // the rest of the current good line
	err     error  // sticky read error, returned once pending is drained
}

func newStdinGuard(r io.ReadCloser, out *lockedWriter, max int, log *slog.Logger) *stdinGuard {
	return &stdinGuard{src: bufio.NewReaderSize(r, 64<<10), closer: r, out: out, max: max, log: log}
}

func (g *stdinGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		if g.err != nil {
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
// after answering a bad one.
func (g *stdinGuard) nextLine() ([]byte, error) {
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
	mu  sync.Mutex
	w   io.WriteCloser
	log *slog.Logger
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.log != nil && bytes.Contains(p, []byte(`"error":{"code":-3260`)) {
		l.logRefusal(p)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
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
