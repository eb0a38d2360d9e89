package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/safe"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// Session is one downstream client session. It owns a go-sdk *mcp.Server
// of its own, so that the tools it has loaded, and the list_changed
// notifications loading causes, never reach another session.
type Session struct {
	hub     *Hub
	id      int64
	server  *mcp.Server
	toolset *Toolset

	// syncMu serialises sync, so that a session never ends up showing an
	// older catalog than the current one.
	syncMu sync.Mutex
	mu     sync.Mutex
	loaded map[string]bool    // exposed names loaded by search_tools
	shown  map[string]string  // what the server currently lists: name -> fingerprint
	ss     *mcp.ServerSession // set once the client has initialized
	stats  Stats

	principal *Principal // who opened it over HTTP (or Connect's context); nil: local
	opened    time.Time
}

// NewSession makes a session, and its server, for the named toolset ("" for all).
func (h *Hub) NewSession(toolset string) (*Session, error) {
	ts, err := h.Toolset(toolset)
	if err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	h.mu.Unlock()
	s := &Session{hub: h, id: id, toolset: ts, loaded: map[string]bool{}, shown: map[string]string{}, opened: time.Now()}
	s.stats.init()
	s.server = mcp.NewServer(&mcp.Implementation{Name: "mcp-hub", Version: Version}, &mcp.ServerOptions{
		Instructions:              h.instructions(h.Catalog(), ts),
		Logger:                    h.sdkLog,
		InitializedHandler:        s.initialized,
		CompletionHandler:         s.complete,
		SubscribeHandler:          s.subscribe,
		UnsubscribeHandler:        s.unsubscribe,
		SupportedProtocolVersions: supportedVersions(),
		Capabilities: &mcp.ServerCapabilities{
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			Resources:   &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:     &mcp.PromptCapabilities{ListChanged: true},
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
		},
	})
	// observe is outside guard so that a request whose handler panicked
	// is still counted, audited and its span ended, as the error guard
	// turned it into.
	s.server.AddReceivingMiddleware(s.observe, s.guard, s.logErrors, s.route)
	s.sync(h.Catalog())
	return s, nil
}

// guard is the session's outermost middleware: the boundary between a
// client and the hub. A panic anywhere below fails that request only (an
// isError result for a tool call, a JSON-RPC internal error otherwise; the
// panic is logged once with its stack), and an error leaves with every
// secret of the config redacted, in its message and its data: a JSON-RPC
// error from an upstream is passed on as the upstream wrote it otherwise.
func (s *Session) guard(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer safe.Recover(s.hub.log, method, func(p error) {
			msg := s.hub.redact.String(p.Error())
			if method == "tools/call" {
				s.recordError()
				res, err = errorResult("Error: "+msg), nil
				return
			}
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
		})
		res, err = next(ctx, method, req)
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
// finished the handshake: only then can it receive notifications.
func (s *Session) initialized(ctx context.Context, req *mcp.InitializedRequest) {
	s.mu.Lock()
	s.ss = req.Session
	s.mu.Unlock()
	s.hub.addSession(s)
	go func() {
		defer safe.Recover(s.hub.log, "closing a session", nil)
		req.Session.Wait()
		s.hub.removeSession(s)
		s.hub.routes.forgetSession(s)
		for _, u := range s.hub.upstreams {
			u.Forget(s)
		}
		s.hub.subs.forget(s)
	}()
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
func (s *Session) visible(t *Tool) bool { return s.toolset.allows(t) }

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

// sync makes the server list exactly what the session should see in
// catalog c, or in the hub's current catalog if that is newer (a search
// that loads tools can race a rebuild). The SDK sends one debounced
// tools/list_changed for the lot.
func (s *Session) sync(c *Catalog) {
	// A panic here leaves this session's list as it was; the hub and the
	// other sessions go on.
	defer safe.Recover(s.hub.log, "updating a session's tool list", nil)
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	if cur := s.hub.Catalog(); cur != nil {
		c = cur
	}
	eager, loaded, deferred := s.partition(c)
	type entry struct {
		def         *mcp.Tool
		fingerprint string
	}
	want := make(map[string]entry, len(eager)+len(loaded)+2)
	for _, t := range append(eager, loaded...) {
		want[t.Name] = entry{t.Def, t.fingerprint}
	}
	if len(loaded)+len(deferred) > 0 {
		for _, mt := range s.hub.metaTools(c, s) {
			want[mt.Name] = entry{mt, fingerprint(mt)}
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// Loaded tools that no longer exist are forgotten; those that still
	// exist stay loaded across the rebuild.
	for name := range s.loaded {
		if _, ok := c.Tool(name); !ok {
			delete(s.loaded, name)
		}
	}
	var gone []string
	for name := range s.shown {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
			delete(s.shown, name)
		}
	}
	if len(gone) > 0 {
		s.server.RemoveTools(gone...)
	}
	for name, e := range want {
		if s.shown[name] == e.fingerprint {
			continue
		}
		if err := s.addTool(e.def); err != nil {
			s.hub.log.Error("tool cannot be served", "tool", name, "err", err)
			continue
		}
		s.shown[name] = e.fingerprint
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

// addTool registers a tool with the session's server. The SDK panics on
// schemas it dislikes (an invalid x-mcp-header annotation, say); one bad
// upstream tool must not take the session down.
func (s *Session) addTool(def *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rejected by the MCP SDK: %v", r)
		}
	}()
	s.server.AddTool(def, answeredByRoute)
	return nil
}

// answeredByRoute is the handler AddTool requires. The SDK never calls it:
// route answers every tools/call first, so that upstream results pass
// through as bytes rather than as an *mcp.CallToolResult.
func answeredByRoute(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, errors.New("mcp-hub: a tool call reached the SDK's handler instead of the hub's router")
}

// load adds deferred tools to the session's loaded set and re-syncs.
// It returns the names that were newly loaded.
func (s *Session) load(c *Catalog, tools []*Tool) (added []string) {
	s.mu.Lock()
	for _, t := range tools {
		if !s.loaded[t.Name] {
			s.loaded[t.Name] = true
			added = append(added, t.Name)
		}
	}
	s.mu.Unlock()
	if len(added) > 0 {
		s.hub.metrics.toolsLoaded.Add(float64(len(added)))
		s.sync(c)
	}
	return added
}

func (s *Session) isLoaded(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loaded[name]
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

// supportedVersions is every SDK version up to 2025-11-25: the SDK's draft
// support broke sampling in tool calls, setLevel and list-change
// subscriptions in our tests.
func supportedVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v <= "2025-11-25" {
			out = append(out, v)
		}
	}
	return out
}

// Version is mcp-hub's version: serverInfo here, clientInfo upstream.
var Version = upstream.Version
