package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioMessage bounds one message from a stdio server, as the SDK's own
// stdio transport does.
const maxStdioMessage = 16 << 20

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
	// conn is the connection Connect made, for raw calls.
	conn *stdioConn
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	// Our own pipes rather than StdoutPipe and StderrPipe: exec's Wait
	// closes those as soon as the process exits, possibly before its last
	// message or its dying words on stderr are read; these let a goroutine
	// wait for the exit from the start.
	stdout, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		stdout.Close()
		w.Close()
		return nil, err
	}
	t.cmd.Stdout, t.cmd.Stderr = w, errW
	err = t.cmd.Start()
	w.Close()
	errW.Close()
	if err != nil {
		stdout.Close()
		errR.Close()
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
		exited: make(chan struct{}),
	}
	go func() {
		c.exitErr = t.cmd.Wait()
		close(c.exited)
	}()
	t.conn = c
	return c, nil
}

type stdioConn struct {
	t      *stdioTransport
	stdout *os.File
	r      *bufio.Reader
	stdin  io.WriteCloser

	wmu sync.Mutex

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
		line, err := c.readLine()
		if err != nil {
			err = c.ended(err)
			c.calls.end(err)
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 || c.calls.deliver(line) {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			if c.t.noise != nil {
				c.t.noise(string(line))
			}
			continue
		}
		c.t.tap.read(msg)
		return msg, nil
	}
}

// readLine reads one line of at most maxStdioMessage bytes.
func (c *stdioConn) readLine() ([]byte, error) {
	var long []byte
	for {
		frag, err := c.r.ReadSlice('\n')
		if err == nil && long == nil {
			return frag, nil
		}
		long = append(long, frag...)
		if len(long) > maxStdioMessage {
			return nil, fmt.Errorf("a message from the server is over %d MiB", maxStdioMessage>>20)
		}
		if err != bufio.ErrBufferFull {
			if err == io.EOF && len(bytes.TrimSpace(long)) > 0 {
				return long, nil
			}
			return long, err
		}
	}
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
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

// Call sends a request of the hub's own and returns its result as the
// server wrote it (see RawResult). Cancelling ctx sends
// notifications/cancelled, as the SDK's client does for its calls.
func (c *stdioConn) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	id, reply, err := c.calls.add()
	if err != nil {
		return nil, err
	}
	if err := c.writeLine(messageLine(id, method, params)); err != nil {
		c.calls.remove(id)
		return nil, err
	}
	select {
	case r := <-reply:
		return r.result, r.err
	case <-ctx.Done():
		if c.calls.remove(id) {
			cancel, _ := json.Marshal(map[string]string{"requestId": id, "reason": context.Cause(ctx).Error()})
			c.writeLine(messageLine("", "notifications/cancelled", cancel))
		}
		return nil, ctx.Err()
	}
}

func (c *stdioConn) writeLine(line []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.stdin.Write(line)
	return err
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
