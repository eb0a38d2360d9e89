package hub

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// toolsListChanged is the method of the notification toolsNotice handles.
const toolsListChanged = "notifications/tools/list_changed"

// toolsNotice decides when a session's client hears that its tool list
// changed, and, for a change the client's own call caused, makes the call's
// result wait until the client has re-listed.
//
// Why: go-sdk sends tools/list_changed itself whenever the session's server
// gains or loses a tool (the hub makes it do so with a placeholder tool,
// Session.toolsChanged, since the session's list is not registered with
// its server), but debounced (about 10 ms after the last change)
// and with no request context, so over streamable HTTP on the standalone
// GET stream. For a change the client's own call caused (search_tools
// loading tools, or a call with discovery.auto_load_on_call) that is too
// late: the call's result is out first, and a client that re-lists on
// list_changed (Claude Code does) starts its next model call with the tool
// list it had, without the tool the model just loaded. A client that opens
// no GET stream never hears of the change at all. Sending the notification
// first is not enough either: Claude Code (2.1.197) re-lists
// asynchronously, and with the notification ahead of the result but no wait
// it saw the loaded tool on its next model call in 0 of 18 turns (3 runs of
// TestRealClients, stdio and HTTP; on the wire its tools/list came after the
// result). Waiting for its re-list's answer, without the ping: stdio 6 of 6,
// HTTP 3 of 6. With the ping: 21 of 21, the result held 47 to 149 ms (hub
// built with -race); under load a few HTTP turns in a thousand still missed
// until the result also waited relistSettle. What it needs is its re-list
// answered, and taken in, before the result.
//
// What happens to each notification:
//   - A change a call caused: once it is in place, Session.load sends
//     tools/list_changed at once, in the call's context, so it precedes the
//     call's result: on the one stream over stdio and in memory, on that
//     request's own POST response stream over streamable HTTP. It goes
//     through the session's sending chain below this middleware (captured
//     when the middleware was added; it is the whole declared chain,
//     Session.sending, so that is go-sdk's own), as the SDK's own
//     notifications do.
//   - The call's result then waits (awaitRelist) until a tools/list of the
//     client that began after the notification has been answered, the
//     client has answered a ping on the call's stream, and relistSettle
//     has passed: a re-listing client has the new list in place before it
//     sees the result, and pays a round trip and the settling time. The wait
//     ends anyway after discovery.relist_wait, or when the call is
//     cancelled; a client that did not re-list after the session's previous
//     notification (it ignores list_changed, or re-lists only before its
//     next model call, like mcp-hub chat) is not waited for, so it pays the
//     bound at most once per session.
//   - The SDK's debounced copy of the change reaches this middleware ~10 ms
//     later and is dropped: the client already knows.
//   - Any other change (an upstream's tools changed, a catalog rebuild, a
//     reload) sends nothing at once and holds nothing: the SDK's debounced
//     notification passes through, one for a burst of changes, as before.
//
// When a debounced notification is dropped: while a call's own notification
// is still to be sent (it will cover everything the debounced one would),
// or when no change has started since the last notification the client was
// sent after the changes it covers were complete. So a change that lands
// between the two is never lost; at worst the client hears of it twice.
// Session.sync, the only place the server's tools change, brackets each
// change with changing and changed.
//
// "Answered" relies on go-sdk ending a request's context only after its
// response is written (jsonrpc2 cancels it after the write): the wait ends
// from context.AfterFunc on the tools/list request's context.
//
// Protocol versions: every legacy version (2024-11-05 to 2025-11-25)
// takes list_changed as an unsolicited notification the server may send at
// any time, and over streamable HTTP (2025-03-26 on) a server may send
// notifications on the stream of the request they relate to. A 2026-07-28
// client loads nothing (modern.go), so none of its calls announces; the
// SDK sends what upstreams change only to its subscriptions/listen
// streams, through this middleware like any debounced notification.
type toolsNotice struct {
	log        *slog.Logger
	relistWait time.Duration // 0: results never wait for a re-list

	mu      sync.Mutex
	send    mcp.MethodHandler // the sending chain below this middleware
	started uint64            // tool-list changes begun
	done    uint64            // tool-list changes complete
	told    uint64            // changes complete when the client was last told
	pending int               // calls that changed the list and have not told the client yet

	announced uint64        // notifications sent in a call's context
	relisted  uint64        // the newest of them a tools/list began after and was answered
	relistCh  chan struct{} // closed (and cleared) when relisted grows
}

// announcement is what a tools/call's context carries, so that the call's
// result can wait for the re-list its own notification asked for.
type announcement struct {
	n  uint64 // 0: the call announced nothing
	ss *mcp.ServerSession
}

type announcementKey struct{}

// middleware is the session server's sending middleware.
func (n *toolsNotice) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	n.mu.Lock()
	n.send = next
	n.mu.Unlock()
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != toolsListChanged {
			return next(ctx, method, req)
		}
		// Only the SDK's debounced notifications come this way; the
		// hub's own go straight to n.send.
		n.mu.Lock()
		drop := n.pending > 0 || n.started == n.told
		if !drop {
			n.told = max(n.told, n.done)
		}
		n.mu.Unlock()
		if drop {
			n.log.Debug("tools/list_changed: debounced copy dropped, the call that caused the change tells the client itself")
			return nil, nil
		}
		res, err := next(ctx, method, req)
		n.log.Debug("tools/list_changed: debounced copy sent")
		return res, err
	}
}

// changing and changed bracket a change of the server's tools.
func (n *toolsNotice) changing() {
	n.mu.Lock()
	n.started++
	n.mu.Unlock()
}

func (n *toolsNotice) changed() {
	n.mu.Lock()
	n.done++
	n.mu.Unlock()
}

// willAnnounce says that a call of ss is changing the list and will
// announce it: every willAnnounce is followed by one announce. Without a
// session (a test calling a handler directly) neither does anything.
func (n *toolsNotice) willAnnounce(ss *mcp.ServerSession) {
	if ss == nil {
		return
	}
	n.mu.Lock()
	n.pending++
	n.mu.Unlock()
}

// announce tells the client now, in the context of the request being
// handled, that the tool list changed: ss gets tools/list_changed before
// the request's result. If that fails (the request's stream is gone), it is
// sent without the request's context instead, to the session's own stream.
func (n *toolsNotice) announce(ctx context.Context, ss *mcp.ServerSession) {
	if ss == nil {
		return
	}
	n.mu.Lock()
	n.pending--
	n.told = max(n.told, n.done)
	n.announced++
	seq := n.announced
	send := n.send
	n.mu.Unlock()
	req := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss, Params: &mcp.ToolListChangedParams{}}
	if _, err := send(ctx, toolsListChanged, req); err != nil {
		bg, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err2 := send(bg, toolsListChanged, req); err2 != nil {
			n.log.Warn("tools/list_changed could not be sent", "err", err, "retry_err", err2)
			return
		}
	}
	n.log.Debug("tools/list_changed: sent before the result of the call that caused it")
	if a, ok := ctx.Value(announcementKey{}).(*announcement); ok {
		a.n, a.ss = seq, ss
	}
}

// forCall prepares a tools/call's context: a notification announce sends
// in it is remembered, for awaitRelist.
func (n *toolsNotice) forCall(ctx context.Context) context.Context {
	return context.WithValue(ctx, announcementKey{}, &announcement{})
}

// listing notes a tools/list request of the client: once it is answered
// (its context ends after the answer is written), every notification sent
// before it began has been acted on.
func (n *toolsNotice) listing(ctx context.Context) {
	n.mu.Lock()
	seq := n.announced
	n.mu.Unlock()
	if seq == 0 {
		return
	}
	context.AfterFunc(ctx, func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		if seq > n.relisted {
			n.relisted = seq
			if n.relistCh != nil {
				close(n.relistCh)
				n.relistCh = nil
			}
		}
	})
}

// awaitRelist holds the result of a call whose context (from forCall)
// announced a change until the client has re-listed since and then
// answered a ping, for at most relistWait in all, and not at all for a
// client that did not re-list after the previous announcement.
func (n *toolsNotice) awaitRelist(ctx context.Context) {
	a, _ := ctx.Value(announcementKey{}).(*announcement)
	if a == nil || a.n == 0 || n.relistWait <= 0 {
		return
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, n.relistWait)
	defer cancel()
	if !n.relistedSince(ctx, a.n) {
		if ctx.Err() != nil {
			n.log.Debug("tools/list_changed: gave up waiting for the client's re-list; the result goes out", "err", context.Cause(ctx))
		}
		return
	}
	defer func() {
		n.log.Debug("tools/list_changed: the client re-listed; the result goes out", "held", time.Since(start))
	}()
	// The ping goes on the call's own stream, after the re-list's answer:
	// its answer means the client has read that far, and over HTTP (two
	// streams the client reads concurrently) given the list it fetched
	// the time to take it in.
	if err := a.ss.Ping(ctx, nil); err != nil {
		n.log.Debug("tools/list_changed: the client did not answer the ping after its re-list", "err", err)
		return
	}
	// The client may still be applying the list it fetched: Claude Code
	// takes it in asynchronously, and answers the ping meanwhile.
	settle := time.NewTimer(relistSettle)
	defer settle.Stop()
	select {
	case <-ctx.Done():
	case <-settle.C:
	}
}

// relistSettle is how long a result still waits after the client's re-list
// and ping, within relist_wait: a client may apply the list it fetched
// asynchronously and answer the ping meanwhile, as Claude Code does under
// load (docs/discovery.md has the measurement).
const relistSettle = 50 * time.Millisecond

// relistedSince waits until a tools/list that began after announcement seq
// has been answered. It reports false when ctx ends first, or at once when
// the client did not re-list after the announcement before seq either.
func (n *toolsNotice) relistedSince(ctx context.Context, seq uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.relisted+1 < seq {
		return false
	}
	for n.relisted < seq {
		if n.relistCh == nil {
			n.relistCh = make(chan struct{})
		}
		ch := n.relistCh
		n.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			n.mu.Lock()
			return false
		}
		n.mu.Lock()
	}
	return true
}
