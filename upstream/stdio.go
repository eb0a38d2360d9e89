package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/safe"
)

// stdioTransport runs a stdio server and speaks newline-delimited JSON-RPC
// with it. It stands in for the SDK's CommandTransport, for four reasons a
// proxy cares about:
//   - latency: a message is read and decoded on the SDK's own read loop,
//     without the extra goroutine hand-off and decoding per message of the
//     SDK's stdio connection (about 0.1 ms per call here, with stock go-sdk);
//   - robustness: a line on stdout that is not JSON-RPC (a banner, a stray
//     print) is logged and skipped instead of ending the connection;
//   - ordering and fidelity: every message goes through the wireTap as it
//     is read (notifications counted, tool schemas kept verbatim);
//   - shutdown: signals go to the server's whole process group, so an
//     `npx` wrapper's node child stops too, and the exit status is kept to
//     say why a server died.
type stdioTransport struct {
	cmd       *exec.Cmd
	tap       *wireTap
	terminate time.Duration
	// noise receives stdout lines that are not JSON-RPC messages.
	noise func(line string)
	// stderr reads the server's stderr until it ends.
	stderr func(io.Reader)
	// maxMessage bounds one message from the server (max_result_bytes):
	// a longer line is dropped, and the call it answers fails.
	maxMessage int64
	// server names the server in errors.
	server string
	// dropped reports a line over maxMessage whose call could not be
	// found.
	dropped func(size int64)
	// writeTimeout bounds a write to the server's stdin when the caller's
	// context has no sooner deadline.
	writeTimeout time.Duration
	// log is the upstream's logger.
	log *slog.Logger
	// conn is the connection Connect made, for raw calls.
	conn *stdioConn
	// release frees the server's sandbox once its process has exited.
	release func()
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	// Our own pipes rather than StdoutPipe and StderrPipe: exec's Wait
	// closes those as soon as the process exits, possibly before its last
	// message or its dying words on stderr are read; these let a goroutine
	// wait for the exit from the start. The stdin pipe is ours too, so
	// that writes to it take deadlines.
	pipes, err := newPipes(3)
	if err != nil {
		return nil, err
	}
	stdinR, stdin := pipes[0][0], pipes[0][1]
	stdout, w := pipes[1][0], pipes[1][1]
	errR, errW := pipes[2][0], pipes[2][1]
	t.cmd.Stdin, t.cmd.Stdout, t.cmd.Stderr = stdinR, w, errW
	err = t.cmd.Start()
	stdinR.Close()
	w.Close()
	errW.Close()
	if err != nil {
		stdin.Close()
		stdout.Close()
		errR.Close()
		t.releaseSandbox()
		return nil, err
	}
	go func() {
		defer errR.Close()
		if t.stderr != nil {
			t.stderr(errR)
		} else {
			io.Copy(io.Discard, errR)
		}
	}()
	c := &stdioConn{
		t:      t,
		stdout: stdout,
		r:      bufio.NewReaderSize(stdout, 64<<10),
		stdin:  stdin,
		wlock:  make(chan struct{}, 1),
		exited: make(chan struct{}),
	}
	go func() {
		c.exitErr = t.cmd.Wait()
		t.releaseSandbox()
		close(c.exited)
	}()
	t.conn = c
	return c, nil
}

// releaseSandbox frees what the server's sandbox holds (its proxy).
func (t *stdioTransport) releaseSandbox() {
	if t.release != nil {
		t.release()
	}
}

type stdioConn struct {
	t      *stdioTransport
	stdout *os.File
	r      *bufio.Reader
	stdin  *os.File

	// wlock holds a token while a line is being written: a mutex that a
	// writer stops waiting for at its deadline.
	wlock chan struct{}

	exited  chan struct{}
	exitErr error // set before exited closes

	calls rawCalls

	closeOnce sync.Once
}

func (c *stdioConn) SessionID() string { return "" }

// Read returns the next JSON-RPC message, skipping lines that are not one.
// When the server exits, the error says how (exit status or signal).
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		line, tail, size, err := c.readLine()
		if err != nil {
			err = c.ended(err)
			c.calls.end(err)
			return nil, err
		}
		if msg := c.take(line, tail, size); msg != nil {
			return msg, nil
		}
	}
}

// take handles one line the server wrote: an answer to a raw call goes
// to its caller, anything else that is JSON-RPC to the SDK (returned);
// other lines are logged and skipped. What the server writes must not
// crash the hub: a panic here skips the line (or passes on what was
// decoded before it).
func (c *stdioConn) take(line, tail []byte, size int64) (msg jsonrpc.Message) {
	defer safe.Recover(c.t.log, "reading a message from the server", nil)
	if size > c.t.maxMessage {
		return c.dropOversized(line, tail, size)
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 || c.calls.deliver(line) {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		if c.t.noise != nil {
			c.t.noise(string(line))
		}
		return nil
	}
	c.t.tap.read(msg)
	return msg
}

// readLine reads one line. A line longer than maxMessage is read to its
// end but not kept: line is then its first bytes and tail its last (where
// its id is, see droppedID), and size says how long it was.
func (c *stdioConn) readLine() (line, tail []byte, size int64, err error) {
	limit := c.t.maxMessage
	var long []byte
	var end ringTail
	over := false
	for {
		frag, err := c.r.ReadSlice('\n')
		size += int64(len(frag))
		switch {
		case !over && err == nil && long == nil && size <= limit:
			return frag, nil, size, nil // the usual case: no copy
		case !over && size <= limit:
			long = append(long, frag...)
		case !over:
			over = true
			long = append(long, frag...)
			end.write(long)
			long = bytes.Clone(long[:min(len(long), edge)])
		default:
			end.write(frag)
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case over && (err == nil || err == io.EOF):
			return long, end.b, size, nil
		case err == io.EOF && len(bytes.TrimSpace(long)) > 0:
			return long, nil, size, nil
		}
		return long, nil, size, err
	}
}

// dropOversized answers for a line over maxMessage: the raw call it
// answers fails, or the SDK gets an error answer for its call instead.
// A line whose id cannot be read, or that is not an answer, is dropped.
func (c *stdioConn) dropOversized(head, tail []byte, size int64) jsonrpc.Message {
	tooLarge := &ResultTooLargeError{Server: c.t.server, Limit: c.t.maxMessage}
	id, ok := droppedID(head, tail)
	if !ok {
		if c.t.dropped != nil {
			c.t.dropped(size)
		}
		return nil
	}
	if c.calls.fail(id, tooLarge) {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(tooLargeResponse(id, tooLarge))
	if err != nil {
		return nil
	}
	return msg
}

// ended adds the exit status to an end of stream, when the process has
// already exited or does so promptly.
func (c *stdioConn) ended(err error) error {
	if !errors.Is(err, io.EOF) {
		return err
	}
	select {
	case <-c.exited:
	case <-time.After(100 * time.Millisecond):
		return err
	}
	if c.exitErr != nil {
		return fmt.Errorf("%w (server exited: %v)", err, c.exitErr)
	}
	return fmt.Errorf("%w (server exited)", err)
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.write(ctx, append(b, '\n'))
}

// StalledError is a write to a stdio server that did not finish in time:
// the server stopped reading its stdin. The connection is closed and the
// server restarted.
type StalledError struct {
	Server  string
	Timeout time.Duration
}

func (e *StalledError) Error() string {
	return fmt.Sprintf("it stopped reading its input: a request could not be written to it within %s, so the hub restarts it",
		e.Timeout.Round(time.Millisecond))
}

// write sends one line. Waiting for the pipe (and for another writer) ends
// at ctx's deadline, or after writeTimeout if that is sooner or ctx has
// ended already (a cancellation notice is still worth sending): a server
// that stops reading must not hang its callers. A write that does not
// finish by then may have left half a line in the pipe, so it ends the
// connection.
func (c *stdioConn) write(ctx context.Context, line []byte) error {
	start := time.Now()
	deadline := start.Add(c.t.writeTimeout)
	if d, ok := ctx.Deadline(); ok && ctx.Err() == nil && d.Before(deadline) {
		deadline = d
	}
	select {
	case c.wlock <- struct{}{}:
	default:
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		select {
		case c.wlock <- struct{}{}:
		case <-timer.C:
			return c.stalled(time.Since(start))
		}
	}
	defer func() { <-c.wlock }()
	c.stdin.SetWriteDeadline(deadline)
	_, err := c.stdin.Write(line)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return c.stalled(time.Since(start))
	}
	return err
}

// stalled ends the connection to a server that stopped reading.
func (c *stdioConn) stalled(waited time.Duration) error {
	go c.Close()
	return &StalledError{Server: c.t.server, Timeout: waited}
}

// Call sends a request of the hub's own and returns its result as the
// server wrote it (see RawResult). Cancelling ctx sends
// notifications/cancelled, as the SDK's client does for its calls.
func (c *stdioConn) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	id, reply, err := c.calls.add()
	if err != nil {
		return nil, err
	}
	if err := c.write(ctx, messageLine(id, method, params)); err != nil {
		c.calls.remove(id)
		return nil, err
	}
	select {
	case r := <-reply:
		return r.result, r.err
	case <-ctx.Done():
		if c.calls.remove(id) {
			cancel, _ := json.Marshal(map[string]string{"requestId": id, "reason": context.Cause(ctx).Error()})
			// Not waited for: the caller is done, and a server that
			// stopped reading is found out by write itself.
			go c.write(context.WithoutCancel(ctx), messageLine("", "notifications/cancelled", cancel))
		}
		return nil, ctx.Err()
	}
}

// newPipes makes n pipes, each {read end, write end}, or none.
func newPipes(n int) ([][2]*os.File, error) {
	var out [][2]*os.File
	for range n {
		r, w, err := os.Pipe()
		if err != nil {
			for _, p := range out {
				p[0].Close()
				p[1].Close()
			}
			return nil, err
		}
		out = append(out, [2]*os.File{r, w})
	}
	return out, nil
}

// Close follows the MCP stdio shutdown: close the server's stdin, wait,
// then SIGTERM, then SIGKILL, each to its process group.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.calls.end(mcp.ErrConnectionClosed)
		c.stdin.Close()
		for _, sig := range []syscall.Signal{0, syscall.SIGTERM, syscall.SIGKILL} {
			if sig != 0 {
				signalGroup(c.t.cmd, sig)
			}
			select {
			case <-c.exited:
				c.stdout.Close()
				return
			case <-time.After(c.t.terminate):
			}
		}
		c.stdout.Close()
	})
	return nil
}
