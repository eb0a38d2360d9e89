// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package jsonrpc2

import (
	"context"
	"sync"
	"testing"
	"time"
)

// deliverConn is a Connection whose messages arrive only by Deliver: its
// Reader blocks until the connection is closed, and its Writer hands every
// response to the test.
type deliverConn struct {
	closed    chan struct{}
	closeOnce sync.Once
	written   chan *Response
}

func (d *deliverConn) Read(ctx context.Context) (Message, error) {
	<-d.closed
	return nil, ErrClientClosing
}

func (d *deliverConn) Write(ctx context.Context, msg Message) error {
	if r, ok := msg.(*Response); ok {
		d.written <- r
	}
	return nil
}

func (d *deliverConn) Close() error {
	d.closeOnce.Do(func() { close(d.closed) })
	return nil
}

func newDeliverConn(t *testing.T, handler HandlerFunc) (*Connection, *deliverConn) {
	t.Helper()
	d := &deliverConn{closed: make(chan struct{}), written: make(chan *Response, 10)}
	c := NewConnection(context.Background(), ConnectionConfig{
		Reader: d, Writer: d, Closer: d,
		Bind: func(*Connection) Handler { return handler },
	})
	t.Cleanup(func() { c.Close() })
	return c, d
}

func call(t *testing.T, id int64, method string) *Request {
	t.Helper()
	req, err := NewCall(Int64ID(id), method, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestDeliverHandlesOnCaller: a request delivered to an idle connection is
// answered before Deliver returns, on the calling goroutine; one delivered
// while another handler holds the queue is queued behind it and handled on
// a goroutine of its own, without blocking its caller; one delivered after
// a handler called Async runs on its caller again.
func TestDeliverHandlesOnCaller(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan string, 1) // a handler that holds or released the queue
	c, d := newDeliverConn(t, func(ctx context.Context, req *Request) (any, error) {
		switch req.Method {
		case "hold": // holds the queue (no Async) until released
			entered <- req.Method
			<-release
		case "async":
			Async(ctx)
			entered <- req.Method
			<-release
		}
		return req.Method, nil
	})

	c.Deliver(call(t, 1, "quick"))
	select {
	case r := <-d.written:
		if r.ID != Int64ID(1) {
			t.Fatalf("answer to %v, want 1", r.ID)
		}
	default:
		t.Fatal("quick: not answered when Deliver returned")
	}

	held := make(chan struct{})
	go func() { c.Deliver(call(t, 2, "hold")); close(held) }()
	// Delivered while "hold" holds the queue: Deliver must return at once
	// (the request waits in the queue, not in its caller).
	<-entered
	c.Deliver(call(t, 3, "quick"))
	select {
	case r := <-d.written:
		t.Fatalf("answer to %v while the queue was held", r.ID)
	default:
	}
	close(release)
	<-held
	got := map[ID]bool{}
	for range 2 {
		select {
		case r := <-d.written:
			got[r.ID] = true
		case <-time.After(10 * time.Second):
			t.Fatalf("answers: got %v, want 2 and 3", got)
		}
	}

	// A handler that calls Async hands the queue on: the next request is
	// handled on its own caller, at once.
	release = make(chan struct{})
	go c.Deliver(call(t, 4, "async"))
	<-entered
	c.Deliver(call(t, 5, "quick"))
	select {
	case r := <-d.written:
		if r.ID != Int64ID(5) {
			t.Fatalf("answer to %v, want 5", r.ID)
		}
	default:
		t.Fatal("quick after async: not answered when Deliver returned")
	}
	close(release)
	<-d.written
}
