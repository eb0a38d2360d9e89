package redisstore

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// A small Redis client: the dozen commands the store sends, in RESP2 over
// a pool of connections. It replaces go-redis, whose client links every
// command Redis has (7.7 MiB of the release binary: the program's help
// templates keep every exported method of a linked type;
// docs/performance.md, "Size").

// options are what a session_store URL says.
type options struct {
	addr     string
	tls      *tls.Config // rediss://
	username string
	password string
	db       int
	timeout  time.Duration // dial, and each command's round trip
}

// errNil is Redis's nil reply (a missing key, an aborted transaction).
var errNil = errors.New("redis: nil")

// replyError is an error reply (-ERR ...).
type replyError string

func (e replyError) Error() string { return "redis: " + string(e) }

// client holds up to maxIdle idle connections; any number may be in use.
type client struct {
	opts options

	mu     sync.Mutex
	idle   []*conn
	closed bool
}

const maxIdle = 16

type conn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

func (c *client) dial(ctx context.Context) (*conn, error) {
	d := net.Dialer{Timeout: c.opts.timeout}
	var nc net.Conn
	var err error
	if c.opts.tls != nil {
		nc, err = (&tls.Dialer{NetDialer: &d, Config: c.opts.tls}).DialContext(ctx, "tcp", c.opts.addr)
	} else {
		nc, err = d.DialContext(ctx, "tcp", c.opts.addr)
	}
	if err != nil {
		return nil, err
	}
	cn := &conn{nc: nc, r: bufio.NewReader(nc), w: bufio.NewWriter(nc)}
	var hello [][]any
	if c.opts.password != "" {
		if c.opts.username != "" {
			hello = append(hello, []any{"AUTH", c.opts.username, c.opts.password})
		} else {
			hello = append(hello, []any{"AUTH", c.opts.password})
		}
	}
	if c.opts.db != 0 {
		hello = append(hello, []any{"SELECT", c.opts.db})
	}
	if len(hello) > 0 {
		cn.nc.SetDeadline(time.Now().Add(c.opts.timeout))
		replies, err := cn.do(hello...)
		if err == nil {
			err = firstError(replies)
		}
		if err != nil {
			nc.Close()
			return nil, err
		}
	}
	return cn, nil
}

// with runs f on a connection, under the round-trip timeout (or ctx's
// deadline, if sooner). A connection that failed is closed, not reused;
// one that failed before f wrote anything is retried once on a new one,
// since an idle connection may have been closed by the server meanwhile.
func (c *client) with(ctx context.Context, f func(*conn) error) error {
	for attempt := 0; ; attempt++ {
		cn, reused, err := c.get(ctx)
		if err != nil {
			return err
		}
		deadline := time.Now().Add(c.opts.timeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		cn.nc.SetDeadline(deadline)
		err = f(cn)
		var re replyError
		if err == nil || errors.Is(err, errNil) || errors.As(err, &re) || errors.Is(err, errNotOwnerTx) {
			c.put(cn)
			return err
		}
		cn.nc.Close()
		if !reused || attempt > 0 || ctx.Err() != nil {
			return err
		}
	}
}

func (c *client) get(ctx context.Context) (*conn, bool, error) {
	c.mu.Lock()
	if n := len(c.idle); n > 0 {
		cn := c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.mu.Unlock()
		return cn, true, nil
	}
	c.mu.Unlock()
	cn, err := c.dial(ctx)
	return cn, false, err
}

func (c *client) put(cn *conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.idle) < maxIdle && !c.closed {
		c.idle = append(c.idle, cn)
		return
	}
	cn.nc.Close()
}

func (c *client) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cn := range c.idle {
		cn.nc.Close()
	}
	c.idle = nil
	c.closed = true // put closes what comes back after
	return nil
}

// do sends the commands in one write (a pipeline) and reads their replies.
// An error reply is a replyError in its place; err is a connection error.
func (cn *conn) do(cmds ...[]any) ([]any, error) {
	for _, args := range cmds {
		fmt.Fprintf(cn.w, "*%d\r\n", len(args))
		for _, a := range args {
			var s string
			switch v := a.(type) {
			case string:
				s = v
			case []byte:
				s = string(v)
			case int:
				s = strconv.Itoa(v)
			case int64:
				s = strconv.FormatInt(v, 10)
			default:
				panic(fmt.Sprintf("redisstore: argument of type %T", a))
			}
			fmt.Fprintf(cn.w, "$%d\r\n%s\r\n", len(s), s)
		}
	}
	if err := cn.w.Flush(); err != nil {
		return nil, err
	}
	replies := make([]any, len(cmds))
	for i := range replies {
		r, err := cn.read()
		if err != nil {
			return nil, err
		}
		replies[i] = r
	}
	return replies, nil
}

// read reads one reply: a string ([]byte for bulk strings), an int64, nil,
// a replyError or a []any.
func (cn *conn) read() (any, error) {
	line, err := cn.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, errors.New("redis: malformed reply")
	}
	kind, body := line[0], string(line[1:len(line)-2])
	switch kind {
	case '+':
		return body, nil
	case '-':
		return replyError(body), nil
	case ':':
		return strconv.ParseInt(body, 10, 64)
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(cn.r, b); err != nil {
			return nil, err
		}
		return b[:n], nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < 0 {
			return nil, err
		}
		items := make([]any, n)
		for i := range items {
			if items[i], err = cn.read(); err != nil {
				return nil, err
			}
		}
		return items, nil
	}
	return nil, fmt.Errorf("redis: unexpected reply %q", kind)
}

func firstError(replies []any) error {
	for _, r := range replies {
		if e, ok := r.(replyError); ok {
			return e
		}
	}
	return nil
}

// bulk is a bulk string reply: errNil for a nil one.
func bulk(r any) ([]byte, error) {
	switch v := r.(type) {
	case []byte:
		return v, nil
	case nil:
		return nil, errNil
	case replyError:
		return nil, v
	}
	return nil, fmt.Errorf("redis: unexpected reply %T", r)
}

// strings is an array reply of bulk strings.
func stringsOf(r any) ([]string, error) {
	switch v := r.(type) {
	case []any:
		out := make([]string, 0, len(v))
		for _, item := range v {
			b, err := bulk(item)
			if err != nil {
				return nil, err
			}
			out = append(out, string(b))
		}
		return out, nil
	case replyError:
		return nil, v
	}
	return nil, fmt.Errorf("redis: unexpected reply %T", r)
}

// integer is an integer reply.
func integer(r any) (int64, error) {
	switch v := r.(type) {
	case int64:
		return v, nil
	case replyError:
		return 0, v
	}
	return 0, fmt.Errorf("redis: unexpected reply %T", r)
}
