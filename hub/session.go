package hub

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/safe"
	"github.com/mcp-hub/mcp-hub/internal/version"
)

// Session is one downstream client session. It owns a go-sdk *mcp.Server
// of its own, so that the list_changed notifications its loading causes
// never reach another session. Its tool list is not registered with that
// server: it is the catalog's shared view for its toolset plus its loaded
// names (toollist.go).
type Session struct {
	hub    *Hub
	id     int64
	server *mcp.Server
	// toolset is the definition of toolsetName ("" for all tools, nil);
	// a reload may replace it (reload.go).
	toolset     atomic.Pointer[config.Toolset]
	toolsetName string

	// syncMu serialises sync, so that a session never ends up showing an
	// older catalog than the current one.
	syncMu sync.Mutex
	mu     sync.Mutex
	loaded map[string]bool // exposed names loaded by search_tools; nil until one is
	cat    *Catalog        // the catalog the session's tool list shows
	sum    [32]byte        // listSum of what the client was last shown, once summed
	summed bool
	ss     *mcp.ServerSession // set once the client has initialized
	ended  bool               // its SDK session has ended (end)
	stats  Stats
	// statsTrace keeps stats: the session's own CallTrace subscriber.
	statsTrace CallTrace
	notice     toolsNotice // when the client hears of tool-list changes (listchanged.go)
	// storedID is the id its server hands out instead of a new one
	// (SessionOptions.ID: a session restored from a store).
	storedID string

	principal *Principal // who opened it (SessionOptions.Principal); nil: local
	// modernShared marks a session made by NewModernSession: shared by
	// the modern requests of a toolset and principal, it has no SDK
	// session of its own, one per request instead.
	modernShared bool
	registered   map[string]*mcp.Tool // what registerTools registered with server; guarded by syncMu
	opened       time.Time
}

// SessionOptions describe a session to make. ID, Principal and Loaded are
// for a session that carries on one made before (a session store's
// restore); Persist for a session a store keeps.
type SessionOptions struct {
	// Toolset names the session's toolset ("" for all tools).
	Toolset string
	// Principal is who the session belongs to; nil: a local session.
	Principal *Principal
	// ID is the id its server hands out for its SDK session (an HTTP
	// Mcp-Session-Id); "" for a fresh random one.
	ID string
	// Loaded are deferred tools the session has loaded already: those
	// that still exist and its toolset allows are loaded before it
	// serves a request.
	Loaded []string
	// Persist, if set, makes the outermost layer of the session's
	// receiving chain (see Session.receiving): a session store's, which
	// keeps the session once its initialize has succeeded.
	Persist func(s *Session) mcp.Middleware
}

// NewSession makes a session, and its server.
func (h *Hub) NewSession(opts SessionOptions) (*Session, error) {
	ts, err := h.Toolset(opts.Toolset)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.mu.Unlock()
	s := &Session{hub: h, id: id, toolsetName: opts.Toolset, cat: h.Catalog(), opened: time.Now(), principal: opts.Principal, storedID: opts.ID}
	s.toolset.Store(ts)
	s.initStats()
	s.server = mcp.NewServer(&mcp.Implementation{Name: "mcp-hub", Version: version.Version}, &mcp.ServerOptions{
		Instructions:              s.cat.view(h, ts).instructions,
		Logger:                    h.sdkLog,
		InitializedHandler:        s.initialized,
		CompletionHandler:         s.complete,
		SubscribeHandler:          s.subscribe,
		UnsubscribeHandler:        s.unsubscribe,
		SupportedProtocolVersions: supportedVersions(h.Config().Protocol.ModernEnabled()),
		GetSessionID:              s.newSessionID,
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
	})
	s.notice.log, s.notice.relistWait = h.log, h.Config().Discovery.RelistWaitOrDefault()
	s.server.AddReceivingMiddleware(s.receiving(opts).middleware()...)
	s.server.AddSendingMiddleware(s.sending().middleware()...)
	s.LoadTools(opts.Loaded) // no client is connected yet: no list_changed
	return s, nil
}

// A layer is one middleware of a session's chain, by name.
type layer struct {
	name string
	mw   mcp.Middleware // nil: not in this session's chain
}

// chain is a session's layers, outermost first.
type chain []layer

// middleware is the chain's middleware, outermost first, as go-sdk's
// AddReceivingMiddleware and AddSendingMiddleware take them: given m1, m2,
// m3 they make m1(m2(m3(handler))), so the first runs first. A later call
// would wrap the whole chain: hence one call per chain, in NewSession.
func (c chain) middleware() []mcp.Middleware {
	var out []mcp.Middleware
	for _, l := range c {
		if l.mw != nil {
			out = append(out, l.mw)
		}
	}
	return out
}

// names are the names of the chain's layers present, outermost first.
func (c chain) names() []string {
	var out []string
	for _, l := range c {
		if l.mw != nil {
			out = append(out, l.name)
		}
	}
	return out
}

// receiving is the chain every request a client sends the session passes
// through, declared here and nowhere else, outermost first:
//
//  1. persist (SessionOptions.Persist; the gateway's session store,
//     gateway/restore.go, for an HTTP session): saves the session once its
//     initialize has succeeded, when every layer below has answered;
//  2. observe (Hooks.Observe; gateway/observe.go): times the request,
//     runs its span, puts the gateway's CallTrace in its context, and
//     counts and audits a tools/call. It is outside guard, so it reports a
//     panicking request too, as the error guard made of it;
//  3. guard: recovers a panic into that request's failure, and redacts
//     every error a client sees;
//  4. logErrors: logs a failed request once;
//  5. route (route.go): decides the request's era once, and answers what
//     the hub answers itself;
//
// then go-sdk's own handlers (initialize, ping, subscriptions/listen, and
// what route passes on). A layer whose hook is not set is left out. The
// gateway's shared versions server (gateway/serve.go) serves no session
// and has a chain of its own: it refuses an initialize.
func (s *Session) receiving(opts SessionOptions) chain {
	return chain{
		{"persist", layerOf(opts.Persist, s)},
		{"observe", layerOf(s.hub.hooks.Observe, s)},
		{"guard", s.guard},
		{"logErrors", s.logErrors},
		{"route", s.route},
	}
}

// sending is the chain every message the session sends its client passes
// through: toolsNotice (listchanged.go), which holds or drops a
// tools/list_changed, alone, so that it sees every message.
func (s *Session) sending() chain {
	return chain{{"notice", s.notice.middleware}}
}

// layerOf is the layer f makes for s; nil when f is not set.
func layerOf(f func(*Session) mcp.Middleware, s *Session) mcp.Middleware {
	if f == nil {
		return nil
	}
	return f(s)
}

// guard is the boundary between a client and the hub, the outermost of
// the hub's own layers (observe wraps it, and so sees a panicking request
// too, as the error guard made of it: see receiving). A panic anywhere
// below fails that request only (an
// isError result for a tool call, a JSON-RPC internal error otherwise; the
// panic is logged once with its stack), and an error leaves with every
// secret of the config redacted, in its message and its data: a JSON-RPC
// error from an upstream is passed on as the upstream wrote it otherwise.
func (s *Session) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer safe.Recover(s.hub.log, method, func(p error) {
			msg := s.hub.redact.String(p.Error())
			if method == "tools/call" {
				s.traceRefused(ctx)
				res, err = errorResult("Error: "+msg), nil
				return
			}
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
		})
		res, err = next(ctx, method, req)
		if rpc, ok := errors.AsType[*jsonrpc.Error](err); ok {
			// The JSON-RPC error itself, not the SDK's wrapping of it
			// ("calling ...: "), whose code alone would reach the client:
			// its message and data go out as the upstream (or the hub)
			// wrote them.
			err = rpc
		}
		if err != nil {
			err = s.hub.redact.Error(err)
		}
		return res, err
	}
}

// logErrors logs each request of the client that fails, once, at info:
// bad input is the client's problem, but an operator should see it.
func (s *Session) logErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil && ctx.Err() == nil {
			s.hub.log.Info("client request failed", "session", s.id, "method", method, "err", s.hub.redact.String(err.Error()))
		}
		return res, err
	}
}

// Server is the session's go-sdk server.
func (s *Session) Server() *mcp.Server { return s.server }

// Stats returns a copy of the session's counters.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats.clone()
}

// initialized registers the session with the hub once the client has
// finished the handshake: only then can it receive notifications. A
// session that has already ended is not registered.
func (s *Session) initialized(ctx context.Context, req *mcp.InitializedRequest) {
	s.start(func() bool {
		s.ss = req.Session
		return true
	})
}

// start registers s with the hub, brings it up to date with the catalog
// and runs the SessionStarted hook: from then on catalog changes reach it.
// claim runs first, under s.mu, and may refuse (false); an ended session
// is never registered.
func (s *Session) start(claim func() bool) {
	s.mu.Lock()
	if s.ended || !claim() {
		s.mu.Unlock()
		return
	}
	s.hub.addSession(s) // under s.mu, so that end cannot come between
	s.mu.Unlock()
	s.sync(s.hub.Catalog())
	if f := s.hub.hooks.SessionStarted; f != nil {
		f(s)
	}
}

// connect serves the session over t, and forgets it when it ends.
func (s *Session) connect(ctx context.Context, t mcp.Transport) (*mcp.ServerSession, error) {
	ss, err := s.server.Connect(ctx, t, nil)
	if err != nil {
		return nil, err
	}
	s.watch(ss, nil)
	return ss, nil
}

// Watch ties s to ss, the SDK session of s.Server() that serves it over a
// transport of the caller's (streamable HTTP): when ss ends, s is
// forgotten everywhere, then then (if not nil) runs.
func (s *Session) Watch(ss *mcp.ServerSession, then func()) { s.watch(ss, then) }

// watch forgets the session everywhere once the SDK session ss has ended,
// and runs then (if any). The SDK runs it then (AfterEnd, our go-sdk
// patch), so that no goroutine waits in ss.Wait for a session's life: with
// the GET stream's, an idle session's stacks are most of what it costs.
func (s *Session) watch(ss *mcp.ServerSession, then func()) {
	ss.AfterEnd(func() {
		defer safe.Recover(s.hub.log, "closing a session", nil)
		s.end()
		if then != nil {
			then()
		}
	})
}

// end forgets the session: the hub's list, call routes, upstream sessions
// and subscriptions.
func (s *Session) end() {
	s.mu.Lock()
	s.ended = true
	started := s.ss != nil || s.modernShared
	s.hub.removeSession(s)
	s.mu.Unlock()
	if f := s.hub.hooks.SessionEnded; started && f != nil {
		f(s)
	}
	s.hub.routes.forgetSession(s)
	for _, u := range s.hub.live.Load().upstreams {
		u.Forget(s)
	}
	s.hub.subs.forget(s)
}

func (s *Session) serverSession() *mcp.ServerSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ss
}

func (s *Session) close() {
	if ss := s.serverSession(); ss != nil {
		ss.Close()
	}
}

// visible reports whether the session's toolset lets t through.
func (s *Session) visible(t *Tool) bool { return allows(s.toolset.Load(), t) }

// partition splits the catalog for this session: eager tools, deferred
// tools it has loaded, and deferred tools it has not.
func (s *Session) partition(c *Catalog) (eager, loaded, deferred []*Tool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range c.Tools {
		switch {
		case !s.visible(t):
		case !t.Deferred:
			eager = append(eager, t)
		case s.loaded[t.Name]:
			loaded = append(loaded, t)
		default:
			deferred = append(deferred, t)
		}
	}
	return eager, loaded, deferred
}

// sync moves the session's tool list to catalog c, or to the hub's
// current catalog if that is newer (a search that loads tools can race a
// rebuild), and sends the session tools/list_changed if its list changed (see
// toolsNotice for when that is dropped).
// Loaded tools that no longer exist are forgotten; those that still exist
// stay loaded across the rebuild.
func (s *Session) sync(c *Catalog) {
	// A panic here leaves this session's list as it was; the hub and the
	// other sessions go on.
	defer safe.Recover(s.hub.log, "updating a session's tool list", nil)
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if cur := s.hub.Catalog(); cur != nil {
		c = cur
	}
	s.mu.Lock()
	for name := range s.loaded {
		// A quarantined tool stays loaded, unlisted: an approval brings
		// it back to the list.
		if _, ok := c.Tool(name); !ok && c.quarantined[name] == nil {
			delete(s.loaded, name)
		}
	}
	s.cat = c
	s.mu.Unlock()
	// Compared with the sum of what the client was last shown, not with
	// the old catalog seen through the session's toolset now: a reload may
	// have changed the toolset too.
	sum := s.listSum(c)
	s.mu.Lock()
	changed := s.summed && sum != s.sum
	s.sum, s.summed = sum, true
	s.mu.Unlock()
	if s.modernShared {
		s.registerTools(c)
	}
	if changed {
		s.toolsChanged()
	}
}

// fingerprint identifies a tool definition's content, so a catalog rebuild
// that changes nothing for a session sends it no list_changed.
func fingerprint(def *mcp.Tool) string {
	b, err := json.Marshal(def)
	if err != nil {
		return fmt.Sprintf("%p", def)
	}
	return string(b)
}

// load adds deferred tools to the session's loaded set, moves it to the
// current catalog and tells the client. It returns the names that were
// newly loaded. A request of ss that loads tools has ss hear of them before
// that request's result (toolsNotice.announce); without ss (tools another
// replica loaded) the SDK's debounced list_changed tells it.
func (s *Session) load(ctx context.Context, ss *mcp.ServerSession, c *Catalog, tools []*Tool) (added []string) {
	s.mu.Lock()
	for _, t := range tools {
		if !s.loaded[t.Name] {
			if s.loaded == nil {
				s.loaded = map[string]bool{}
			}
			s.loaded[t.Name] = true
			added = append(added, t.Name)
		}
	}
	s.mu.Unlock()
	if len(added) > 0 {
		s.notice.willAnnounce(ss)
		defer s.notice.announce(ctx, ss)
		s.sync(c)
		if f := s.hub.hooks.ToolsLoaded; f != nil {
			f(s, added) // before the call that loaded them answers
		}
	}
	return added
}

// newSessionID is the HTTP session id the SDK gives the session: the one
// it had for a session restored from the store, a fresh random one
// otherwise (the SDK's default).
func (s *Session) newSessionID() string {
	if s.storedID != "" {
		return s.storedID
	}
	return rand.Text()
}

func (s *Session) isLoaded(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loaded[name]
}

// toolsChanged tells the client the session's tool list changed, through
// the SDK's debounced tools/list_changed, which toolsNotice drops when the
// call that caused the change tells the client itself.
func (s *Session) toolsChanged() {
	s.notice.changing()
	defer s.notice.changed()
	s.notifyToolsChanged()
}

// notifyResourcesChanged and notifyPromptsChanged make the SDK send a
// list_changed: it only does so when its own lists change, so a
// placeholder is added and removed (one debounced notification).
func (s *Session) notifyResourcesChanged() {
	const uri = "mcp-hub://placeholder"
	s.server.AddResource(&mcp.Resource{URI: uri, Name: "placeholder"}, nil)
	s.server.RemoveResources(uri)
}

func (s *Session) notifyPromptsChanged() {
	const name = "mcp-hub-placeholder"
	s.server.AddPrompt(&mcp.Prompt{Name: name}, nil)
	s.server.RemovePrompts(name)
}

// SupportedProtocolVersions are the protocol versions of the legacy era,
// which the gateway's shared server speaks; a session's server adds
// 2026-07-28 when protocol.modern is on (supportedVersions).
func SupportedProtocolVersions() []string { return supportedVersions(false) }
