package hub

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolsListChanged is the method of the notification toolsNotice handles.
const toolsListChanged = "notifications/tools/list_changed"

// toolsNotice decides when a session's client hears that its tool list
// changed.
//
// Why: go-sdk sends tools/list_changed itself whenever the session's server
// gains or loses a tool, but debounced (about 10 ms after the last change)
// and with no request context, so over streamable HTTP on the standalone
// GET stream. For a change the client's own call caused (search_tools
// loading tools, or a call with discovery.auto_load_on_call) that is too
// late: the call's result is already out, and a client such as Claude Code
// starts its next model call with the tool list it had, without the tool
// the model just loaded. A client that opens no GET stream never hears of
// the change at all.
//
// What happens to each notification:
//   - A change a call caused: once it is in place, Session.load sends
//     tools/list_changed at once, in the call's context, so it precedes the
//     call's result: on the one stream over stdio and in memory, on that
//     request's own POST response stream over streamable HTTP. It goes
//     through the session's sending chain below this middleware (captured
//     when the middleware was added, last, so that is the whole chain), as
//     the SDK's own notifications do.
//   - The SDK's debounced copy of that change reaches this middleware
//     ~10 ms later and is dropped: the client already knows.
//   - Any other change (an upstream's tools changed, a catalog rebuild, a
//     reload) sends nothing at once: the SDK's debounced notification passes
//     through, one for a burst of changes, as before.
//
// When a debounced notification is dropped: while a call's own notification
// is still to be sent (it will cover everything the debounced one would),
// or when no change has started since the last notification the client was
// sent after the changes it covers were complete. So a change that lands
// between the two is never lost; at worst the client hears of it twice.
// Session.sync, the only place the server's tools change, brackets each
// change with changing and changed.
//
// Protocol versions: every version the hub negotiates (2024-11-05 to
// 2025-11-25, supportedVersions) takes list_changed as an unsolicited
// notification the server may send at any time, and over streamable HTTP
// (2025-03-26 on) a server may send notifications on the stream of the
// request they relate to. From 2026-07-28 on, list changes go only to
// subscriptions/listen streams: lift the hub's version cap only together
// with this.
type toolsNotice struct {
	log *slog.Logger

	mu      sync.Mutex
	send    mcp.MethodHandler // the sending chain below this middleware
	started uint64            // tool-list changes begun
	done    uint64            // tool-list changes complete
	told    uint64            // changes complete when the client was last told
	pending int               // calls that changed the list and have not told the client yet
}

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
	send := n.send
	n.mu.Unlock()
	req := &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss, Params: &mcp.ToolListChangedParams{}}
	_, err := send(ctx, toolsListChanged, req)
	if err == nil {
		n.log.Debug("tools/list_changed: sent before the result of the call that caused it")
		return
	}
	bg, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err2 := send(bg, toolsListChanged, req); err2 != nil {
		n.log.Warn("tools/list_changed could not be sent", "err", err, "retry_err", err2)
	}
}
