// Package safe turns a panic into an error at the hub's boundaries.
//
// The hub serves many sessions and many upstreams from one process: a bug
// reached by one client's request, or by one upstream's odd answer, must
// fail that request only. Every boundary where input from a client or an
// upstream enters hub code (a session's requests, the stdio guard, catalog
// rebuilds, the handlers of what an upstream sends, background goroutines)
// defers Recover. It logs the panic once, with its stack, and hands the
// boundary a *PanicError to answer with: an isError result for a tool
// call, a JSON-RPC internal error for other requests, the previous catalog
// for a rebuild.
package safe

import (
	"fmt"
	"log/slog"
	"runtime/debug"
)

// PanicError is a recovered panic.
type PanicError struct {
	// Where names the boundary: "tools/call", "catalog rebuild", ...
	Where string
	// Value is what was passed to panic.
	Value any
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("internal error in mcp-hub (%s): %v; this is a bug, the details are in the hub's log", e.Where, e.Value)
}

// Recover, deferred, stops a panic in the function that deferred it: it logs
// the panic and its stack once, and calls handle (when not nil) with a
// *PanicError so that the function can set its results.
//
//	defer safe.Recover(log, "catalog rebuild", func(err error) { c = prev })
//
// It must be deferred directly (recover only works there).
func Recover(log *slog.Logger, where string, handle func(err error)) {
	v := recover()
	if v == nil {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	log.Error("recovered from a panic; only this request failed", "where", where, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	if handle != nil {
		handle(&PanicError{Where: where, Value: v})
	}
}

// Go runs f in a new goroutine that recovers from a panic in f (logged,
// then dropped).
func Go(log *slog.Logger, where string, f func()) {
	go func() {
		defer Recover(log, where, nil)
		f()
	}()
}
