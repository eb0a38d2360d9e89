package upstream

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/origin"
	"github.com/mcp-hub/mcp-hub/internal/safe"
)

// baseEnv is what every stdio server gets from the hub's environment when
// inherit_env is off: enough to find programs and behave in the user's locale.
var baseEnv = []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "TERM", "SYSTEMROOT", "APPDATA", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"}

// sseRetries is how often the SDK may resume an interrupted event stream
// (after the server's SSE `retry` delay, else its own 1-2 s) before it
// gives the connection up; the Upstream then reconnects itself, with
// backoff. One resumption keeps a stream a server ends on purpose (SEP-1699
// polling) alive; a dead server is noticed one delay later. (-1, no
// resumption at all, reconnected too early for `sse-retry`.)
const sseRetries = 1

// transport builds a fresh go-sdk transport for one connection attempt,
// whose messages pass through tap.
//
// watch, if set, is told when a streamable HTTP connection's
// subscriptions/listen stream ends (listenWatch).
func (u *Upstream) transport(ctx context.Context, tap *wireTap, watch *listenWatch) (mcp.Transport, error) {
	switch u.cfg.Kind() {
	case config.TransportBuiltin:
		return u.builtinTransport(ctx, tap)
	case config.TransportStreamable:
		// The SDK's streamable connection has private hooks that a wrapper
		// around it would hide, so notifications are counted below it, in
		// the response bodies it reads.
		client, err := u.httpClient(tap, watch)
		if err != nil {
			return nil, err
		}
		return &mcp.StreamableClientTransport{
			Endpoint:     u.cfg.URL,
			HTTPClient:   client,
			MaxRetries:   sseRetries,
			MaxEventSize: u.maxEventSize(),
			OAuthHandler: u.oauthHandler(),
		}, nil
	case config.TransportSSE:
		client, err := u.httpClient(nil, nil)
		if err != nil {
			return nil, err
		}
		return &countingTransport{
			inner: &sseTransport{
				inner: &mcp.SSEClientTransport{Endpoint: u.cfg.URL, HTTPClient: client, MaxEventSize: u.maxEventSize()},
				life:  ctx,
			},
			tap:      tap,
			tooLarge: u.tooLarge(),
		}, nil
	default:
		return u.commandTransport(ctx, tap)
	}
}

func (u *Upstream) commandTransport(ctx context.Context, tap *wireTap) (mcp.Transport, error) {
	path, err := exec.LookPath(u.cfg.Command)
	if err != nil {
		return nil, fmt.Errorf("command %q not found: install it or give its full path in 'command'", u.cfg.Command)
	}
	cmd := exec.Command(path, u.cfg.Args...)
	cmd.Dir = u.cfg.Cwd
	cmd.Env = u.childEnv()
	setChildAttrs(cmd)
	release, err := u.sandbox(ctx, cmd)
	if err != nil {
		return nil, err
	}
	tail := &stderrTail{done: make(chan struct{})}
	if tap == &u.tap {
		// The shared process's last words explain its failures; an
		// isolated process's only end up in the log.
		u.mu.Lock()
		u.stderr = tail
		u.mu.Unlock()
	}
	return &stdioTransport{
		cmd:          cmd,
		tap:          tap,
		terminate:    2 * time.Second,
		noise:        u.logNoise,
		stderr:       func(r io.Reader) { u.logStderr(r, tail) },
		maxMessage:   u.opts.MaxResultBytes,
		server:       u.cfg.Name,
		dropped:      u.droppedMessage,
		writeTimeout: u.cfg.CallTimeout(),
		log:          u.log,
		release:      release,
	}, nil
}

// Sandboxer rewrites the command of a stdio server to run it confined
// (sandbox.Runner). release is called once the process has exited.
type Sandboxer interface {
	Wrap(ctx context.Context, server string, box *config.Sandbox, cmd *exec.Cmd) (release func(), err error)
}

// sandbox confines cmd when the server's config asks for it. It fails
// closed: no Sandboxer, or one that cannot set the sandbox up, and the
// server does not start.
func (u *Upstream) sandbox(ctx context.Context, cmd *exec.Cmd) (release func(), err error) {
	if !u.cfg.Sandbox.On() {
		return func() {}, nil
	}
	if u.opts.Sandbox == nil {
		return nil, fmt.Errorf("server %s asks for a sandbox and this hub has none to run it in, so it does not start", u.cfg.Name)
	}
	return u.opts.Sandbox.Wrap(ctx, u.cfg.Name, u.cfg.Sandbox, cmd)
}

// tooLarge is the error for an answer of this server over max_result_bytes.
func (u *Upstream) tooLarge() *ResultTooLargeError {
	return &ResultTooLargeError{Server: u.cfg.Name, Limit: u.opts.MaxResultBytes}
}

// droppedMessage reports a message over max_result_bytes that answered no
// call the hub could find (a notification, or an answer without a
// readable id): it is dropped, and a call it answered times out.
func (u *Upstream) droppedMessage(size int64) {
	u.log.Warn("dropped a message from the server larger than max_result_bytes", "bytes", size, "max_result_bytes", u.opts.MaxResultBytes)
}

// maxEventSize is the SDK's own cap on one server-sent event: above ours,
// which drops a large event without ending the stream (limitRoundTripper).
func (u *Upstream) maxEventSize() int {
	return int(min(u.opts.MaxResultBytes+1<<20, 1<<31-1))
}

// logNoise reports a stdout line that is not JSON-RPC; the connection goes on.
func (u *Upstream) logNoise(line string) {
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	u.log.Warn("server wrote a non-JSON-RPC line on stdout (ignored; servers must log to stderr)", "line", u.redact.String(line))
}

// childEnv is the environment of a stdio server: a minimal base from the
// hub's own environment (or all of it with inherit_env), then the
// configured env on top.
func (u *Upstream) childEnv() []string {
	env := map[string]string{}
	if u.cfg.InheritEnv {
		for _, kv := range os.Environ() {
			for i := 0; i < len(kv); i++ {
				if kv[i] == '=' {
					env[kv[:i]] = kv[i+1:]
					break
				}
			}
		}
	} else {
		for _, k := range baseEnv {
			if v, ok := os.LookupEnv(k); ok {
				env[k] = v
			}
		}
	}
	for k, v := range u.cfg.Env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// maxStderrLine is how much of one stderr line is logged; the rest of a
// longer line is read and counted, never held.
const maxStderrLine = 4 << 10

// logStderr copies a child's stderr into our log, one record per line,
// tagged with the server name, and keeps the last line for error reports.
// It reads to the end whatever the child writes: a child whose stderr is
// not read blocks, or dies of SIGPIPE.
func (u *Upstream) logStderr(r io.Reader, tail *stderrTail) {
	defer close(tail.done)
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, size, err := readBoundedLine(br, maxStderrLine)
		if size > 0 {
			u.stderrLine(line, size, tail)
		}
		if err != nil {
			return
		}
	}
}

// stderrLine logs one line; size is its whole length, of which line is
// the start.
func (u *Upstream) stderrLine(line []byte, size int, tail *stderrTail) {
	defer safe.Recover(u.log, "logging the server's stderr", nil)
	truncated := size > len(line)
	if truncated {
		// A secret cut in two by the truncation would not be recognised.
		line = line[:max(0, len(line)-u.redact.Longest())]
	}
	text := u.redact.String(strings.TrimRight(string(line), "\r\n"))
	if truncated {
		text += fmt.Sprintf("... [line of %d bytes, truncated]", size)
	}
	u.log.Info("stderr", "line", text)
	if strings.TrimSpace(text) != "" {
		tail.mu.Lock()
		tail.last = text
		tail.mu.Unlock()
	}
}

// readBoundedLine reads one line from br, keeping at most limit bytes of
// it; size is the line's whole length.
func readBoundedLine(br *bufio.Reader, limit int) (line []byte, size int, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		size += len(frag)
		if room := limit - len(line); room > 0 {
			line = append(line, frag[:min(len(frag), room)]...)
		}
		if err != bufio.ErrBufferFull {
			return line, size, err
		}
	}
}

// stderrTail is the last line a child process wrote on stderr: why it
// exited, usually.
type stderrTail struct {
	mu   sync.Mutex
	last string
	done chan struct{} // closed at EOF, when the process has exited
}

// withStderr adds a stdio server's last stderr line to err, after giving
// the process's stderr a moment to drain: "EOF" alone says nothing.
func (u *Upstream) withStderr(err error) error {
	u.mu.Lock()
	tail := u.stderr
	u.mu.Unlock()
	if tail == nil {
		return err
	}
	select {
	case <-tail.done:
	case <-time.After(300 * time.Millisecond):
	}
	tail.mu.Lock()
	last := tail.last
	tail.mu.Unlock()
	if last == "" {
		return err
	}
	if len(last) > 300 {
		last = last[:300] + "..."
	}
	return fmt.Errorf("%w (last stderr line: %s)", err, last)
}

// httpClient is the client of one connection to a remote server. Its
// requests go to the configured origin only, with the configured headers
// (ScopedTransport, NewScopedClient); what comes back is bounded by
// max_result_bytes (limitRoundTripper); with a tap, the server-sent events
// it reads are counted (countingRoundTripper); with a watch, the end of its
// subscriptions/listen streams is noticed (listenRoundTripper); the trace
// context of the call in progress goes along as headers (traceHeaders).
func (u *Upstream) httpClient(tap *wireTap, watch *listenWatch) (*http.Client, error) {
	target, err := url.Parse(u.cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	configured := origin.Of(target)
	var rt http.RoundTripper = &ScopedTransport{Origin: configured, Headers: u.cfg.Headers, Base: u.opts.HTTPTransport}
	rt = &limitRoundTripper{base: rt, limit: u.opts.MaxResultBytes, server: u.cfg.Name, dropped: u.droppedMessage}
	if tap != nil {
		rt = &countingRoundTripper{base: rt, tap: tap}
	}
	if watch != nil {
		rt = &listenRoundTripper{base: rt, watch: watch}
	}
	return NewScopedClient(configured, traceHeaders{base: rt}), nil
}

// builtinTransport starts the in-process server and connects to it in memory.
func (u *Upstream) builtinTransport(ctx context.Context, tap *wireTap) (mcp.Transport, error) {
	if u.opts.Builtin == nil {
		return nil, errors.New("builtin servers are not available in this build")
	}
	server, err := u.opts.Builtin(u.cfg.Builtin, u.cfg.Env)
	if err != nil {
		return nil, err
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		return nil, fmt.Errorf("builtin %q: %w", u.cfg.Builtin, err)
	}
	return &countingTransport{inner: ct, tap: tap, tooLarge: u.tooLarge()}, nil
}

// countingTransport passes every message it reads to the wireTap, and
// turns an answer whose result is over max_result_bytes into the error
// for its call. Only used where the inner connection has no private SDK
// hooks to lose: in-memory and SSE.
type countingTransport struct {
	inner    mcp.Transport
	tap      *wireTap
	tooLarge *ResultTooLargeError
}

func (t *countingTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Connection: c, tap: t.tap, tooLarge: t.tooLarge}, nil
}

type countingConn struct {
	mcp.Connection
	tap      *wireTap
	tooLarge *ResultTooLargeError
}

func (c *countingConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	if r, ok := msg.(*jsonrpc.Response); ok && c.tooLarge != nil && int64(len(r.Result)) > c.tooLarge.Limit {
		msg = &jsonrpc.Response{ID: r.ID, Error: c.tooLarge.rpcError()}
	}
	c.tap.read(msg)
	return msg, nil
}

// sseTransport keeps an SSE session's event stream open after the connect.
// The SDK issues the stream's GET with the context given to Connect, which
// the Upstream bounds by its connect timeout: cancelling it when the
// connect returns would end the session at once. The stream lives as long
// as the Upstream's own context instead; ctx still aborts the handshake.
type sseTransport struct {
	inner *mcp.SSEClientTransport
	life  context.Context
}

func (t *sseTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	life, cancel := context.WithCancel(t.life)
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(life)
	if !stop() {
		// ctx ended during the handshake.
		if err == nil {
			conn.Close()
			err = ctx.Err()
		}
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &cancelConn{Connection: conn, cancel: cancel}, nil
}

// cancelConn releases its context when closed.
type cancelConn struct {
	mcp.Connection
	cancel context.CancelFunc
}

func (c *cancelConn) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// countingRoundTripper counts log and progress notifications in streamable
// HTTP responses (SSE streams) as the SDK reads them, before it can see the
// response they precede (see notificationCounter).
type countingRoundTripper struct {
	base http.RoundTripper
	tap  *wireTap
}

func (t *countingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err == nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		resp.Body = &countingBody{ReadCloser: resp.Body, tap: t.tap}
	}
	return resp, err
}

// maxCountedLine bounds the partial SSE line kept between reads; longer
// lines are results, not the small notifications being counted.
const maxCountedLine = 1 << 20

// countingBody scans an SSE stream line by line as it is read.
type countingBody struct {
	io.ReadCloser
	tap     *wireTap
	partial []byte // the current line, when a read ended inside it
	skip    bool   // the current line is too long to be counted
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	data := p[:n]
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			if !b.skip {
				b.partial = append(b.partial, data...)
				if len(b.partial) > maxCountedLine {
					b.partial, b.skip = b.partial[:0], true
				}
			}
			break
		}
		line := data[:i]
		if len(b.partial) > 0 {
			line = append(b.partial, line...)
		}
		if !b.skip {
			b.scan(line)
		}
		b.partial, b.skip = b.partial[:0], false
		data = data[i+1:]
	}
	return n, err
}

func (b *countingBody) scan(line []byte) {
	if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		b.tap.readSSE(data)
	}
}
