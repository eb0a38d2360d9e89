package hub

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/mcp-hub/mcp-hub/upstream"
)

// The two protocol eras, as the hub serves them (docs/stateless-mcp.md).
//
// Legacy (2025-11-25 and older): a client opens a session with initialize;
// the session owns its loaded tools, and search_tools loads what it finds
// into that session's tools/list, announced with list_changed.
//
// Modern (2026-07-28): every request stands alone, carrying its protocol
// version, client info and capabilities in _meta; there is no session to
// load tools into, and the specification forbids a tools/list that varies
// per connection or as a side effect of other requests. So a modern
// client's tools/list is the toolset's eager tools plus search_tools and
// call_tool, the same for every request of that toolset and principal;
// search_tools answers with names, descriptions and full input schemas and
// loads nothing, and the model calls what it found through call_tool (or by
// its exposed name with discovery.auto_load_on_call). Changes an upstream
// causes reach the client on its subscriptions/listen stream.
//
// go-sdk does the protocol: server/discover, per-request _meta, the
// removals (ping, logging/setLevel, resources/subscribe answer "method not
// found" to a modern request), subscriptions/listen and the routing headers.
// The hub serves both eras from the same Session type: over stdio and in
// memory a connection's one Session is modern once its first modern request
// arrives; over HTTP (package gateway) a modern request, which has no
// Mcp-Session-Id, is served by go-sdk's stateless handler in a Session
// NewModernSession made, shared by the modern requests of its toolset and
// principal, on whichever replica it lands. So that Session is many
// clients: what an upstream sends is routed by the request's call, never by
// the Session (attribution.go's router). An upstream of the legacy era reaches
// a modern client's calls through inputrequired.go.

// ModernProtocol is the first protocol revision of the modern era.
const ModernProtocol = "2026-07-28"

// supportedVersions is every protocol version of the SDK up to 2025-11-25,
// and 2026-07-28 when modern (protocol.modern).
func supportedVersions(modern bool) []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v <= "2025-11-25" || (modern && v == ModernProtocol) {
			out = append(out, v)
		}
	}
	return out
}

// versionedRequest is what go-sdk's server requests have: the protocol
// version of the request itself (its _meta in the modern era, the
// session's negotiated one before).
type versionedRequest interface{ ProtocolVersion() string }

// isModern reports whether req was sent in the modern era.
func isModern(req mcp.Request) bool {
	if r, ok := req.(versionedRequest); ok {
		return r.ProtocolVersion() >= ModernProtocol
	}
	return modernSession(serverSessionOf(req))
}

// modernSession reports whether ss speaks the modern era.
func modernSession(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	ip := ss.InitializeParams()
	return ip != nil && ip.ProtocolVersion >= ModernProtocol
}

func serverSessionOf(req mcp.Request) *mcp.ServerSession {
	if req == nil {
		return nil
	}
	ss, _ := req.GetSession().(*mcp.ServerSession)
	return ss
}

// beginModern registers a stdio or in-memory session with the hub at its
// first modern request, as initialized does for a legacy one: from then on
// catalog changes reach it (as notifications on its subscriptions/listen
// streams). A session the hub already knows, or one that has ended, is
// left alone.
func (s *Session) beginModern(ss *mcp.ServerSession) {
	s.start(func() bool {
		if s.ss != nil || s.modernShared {
			return false
		}
		s.ss = ss
		return true
	})
}

// requestSessionKey carries the SDK session of the request being handled,
// so that what an upstream sends during a call (progress, logs) reaches the
// request's own stream when the hub Session has no single SDK session (a
// shared modern Session over HTTP).
type requestSessionKey struct{}

func withRequestSession(ctx context.Context, req mcp.Request) context.Context {
	if ss := serverSessionOf(req); ss != nil {
		return context.WithValue(ctx, requestSessionKey{}, ss)
	}
	return ctx
}

func requestSession(ctx context.Context) *mcp.ServerSession {
	ss, _ := ctx.Value(requestSessionKey{}).(*mcp.ServerSession)
	return ss
}

// NewModernSession makes a session shared by every modern request of a
// toolset and principal (what a modern client's tools/list may depend
// on), and registers it with the hub, so that catalog changes reach the
// subscriptions/listen streams open on its server. The gateway connects
// a short-lived SDK session of its server for each request (go-sdk's
// stateless HTTP handler); the session never loads a tool. End it with
// End.
func (h *Hub) NewModernSession(opts SessionOptions) (*Session, error) {
	s, err := h.NewSession(opts)
	if err != nil {
		return nil, err
	}
	s.start(func() bool {
		s.modernShared = true
		return true
	})
	return s, nil
}

// End ends a session made by NewModernSession: the hub forgets it.
func (s *Session) End() { s.end() }

// Busy reports whether a request holds an SDK session of s's server open:
// a subscriptions/listen stream, or a call in flight.
func (s *Session) Busy() bool {
	for range s.server.Sessions() {
		return true
	}
	return false
}

// modernToolList is a modern client's tools/list in catalog c: the
// toolset's eager tools and meta-tools, never a loaded tool.
func (s *Session) modernToolList(c *Catalog) []*mcp.Tool {
	return c.modernView(s.hub, s.toolset.Load()).listed
}

// modernView is the catalog's view for toolset ts as a modern client sees
// it: the eager tools, and the meta-tools in their modern wording with
// call_tool always among them (it is how a found tool is called).
func (c *Catalog) modernView(h *Hub, ts *config.Toolset) *toolView {
	c.views.mu.Lock()
	if v, ok := c.views.modern[ts]; ok {
		c.views.mu.Unlock()
		return v
	}
	c.views.mu.Unlock()
	legacy := c.view(h, ts)
	v := &toolView{}
	for _, def := range legacy.listed {
		if !legacy.isMeta(def.Name) {
			v.listed = append(v.listed, def)
		}
	}
	if len(legacy.meta) > 0 {
		v.meta = h.modernMetaTools(c, ts)
		v.listed = append(v.listed, v.meta...)
	}
	slices.SortFunc(v.listed, byName)
	v.instructions = h.modernInstructions(c, ts)
	c.views.mu.Lock()
	defer c.views.mu.Unlock()
	if have, ok := c.views.modern[ts]; ok {
		return have
	}
	if c.views.modern == nil {
		c.views.modern = map[*config.Toolset]*toolView{}
	}
	c.views.modern[ts] = v
	return v
}

// modernMetaTools are search_tools and call_tool as a modern client sees
// them: search_tools finds tools and shows their schemas, call_tool calls
// them; nothing is loaded into a list.
func (h *Hub) modernMetaTools(c *Catalog, ts *config.Toolset) []*mcp.Tool {
	alwaysLoad := mcp.Meta{alwaysLoadKey: true}
	how := "call_tool {name, arguments}"
	if h.Config().Discovery.AutoLoadOnCall {
		how += ", or directly by name"
	}
	return []*mcp.Tool{{
		Name: SearchToolsName,
		Description: "Search for tools that are not in your tool list. " +
			"Pass `query` (what you want to do, in plain words) to search, or for a task of several steps `queries` (one short query per step), `server_name` to list a whole server's tools " +
			"(or to search within it, with `query`), or `tool_names` (exact names from the list below). " +
			"It answers with each tool's name, description and input schema; call a tool it found through " + how + ".\n\n" +
			"Deferred tools by server:\n" + h.manifest(c, ts),
		InputSchema: json.RawMessage(searchToolsSchema),
		Meta:        alwaysLoad,
	}, {
		Name:        CallToolName,
		Description: "Call a tool that search_tools found, by its exact name, with arguments matching the input schema search_tools showed.",
		InputSchema: json.RawMessage(callToolSchema),
		Meta:        alwaysLoad,
	}}
}

// modernInstructions are the server instructions a modern client gets
// from server/discover.
func (h *Hub) modernInstructions(c *Catalog, ts *config.Toolset) string {
	text := "This server (mcp-hub) gives access to many tools. Some are not in your tool list: " +
		"call search_tools with a plain-words query (one per step of a task, in queries), or server_name, or exact tool_names, to find them and see their input schemas, " +
		"then call them through call_tool {name, arguments}"
	if h.Config().Discovery.AutoLoadOnCall {
		text += " or directly by name"
	}
	return h.withManifest(c, ts, text)
}

// modernSearchResultText is search_tools' answer to a modern client: the
// tools found with their parameters and full input schemas, and how to
// call them.
func (h *Hub) modernSearchResultText(found []*Tool, notFound []string, pool []*Tool, query, server string) string {
	names := make([]string, len(found))
	for i, t := range found {
		names[i] = t.Name
	}
	text := h.searchResultBody(found, names, nil, notFound, pool, query, server)
	if len(found) == 0 {
		return text
	}
	text += "\n\nCall them through call_tool {name, arguments}"
	if h.Config().Discovery.AutoLoadOnCall {
		text += ", or directly by name"
	}
	return text + "."
}

// cacheScope is the cacheScope of a modern client's list results: private
// when the session belongs to an authenticated principal (what it lists
// may depend on that authorization), public otherwise.
func (s *Session) cacheScope() string {
	if s.principal != nil && s.principal.ID != "" {
		return "private"
	}
	return "public"
}

// registerTools registers the modern tool list of catalog c with the
// server of a shared modern Session. route still answers tools/list and
// tools/call; go-sdk's HTTP handler reads the registered definitions to
// validate a request's Mcp-Param-* headers against the tool's
// x-mcp-header annotations. One registry per toolset and principal is
// affordable where one per legacy session was not; a definition already
// registered is not registered again (the SDK re-reads its schema each
// time). Called under syncMu.
func (s *Session) registerTools(c *Catalog) {
	tools := s.modernToolList(c)
	next := make(map[string]*mcp.Tool, len(tools))
	for _, def := range tools {
		next[def.Name] = def
		if s.registered[def.Name] != def {
			s.server.AddTool(def, answeredByRoute)
		}
	}
	var gone []string
	for name := range s.registered {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.server.RemoveTools(gone...)
	}
	s.registered = next
}

// stripEraMeta removes from the params of a modern request the hub
// forwards upstream the _meta keys with which the request describes its
// client and protocol. They are about the client's hop, not the
// upstream's: forwarded, they would make a legacy upstream take the call
// for a 2026-07-28 request it cannot serve (go-sdk's stateful HTTP server
// rejects it). The SDK has read them by now: the request's SDK session
// holds them as its initialize params.
func stripEraMeta(method string, req mcp.Request) {
	switch method {
	case "tools/call", "resources/read", "prompts/get", "completion/complete",
		"resources/list", "resources/templates/list", "prompts/list":
	default:
		return
	}
	p := req.GetParams()
	if v := reflect.ValueOf(p); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return // a list request may have no params
	}
	upstream.DropHopMeta(p.GetMeta())
}
