package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// The toolset of a session bounds everything it reaches, not only tools:
// the resources, resource templates, subscriptions, prompts and
// completions of a server its toolset does not reach (Session.reaches) are
// never listed, and asking for one by name gets the answer a name no
// server has gets (the hub's own not-found error, or the upstream's when
// the session's one resource server is asked for a URI it does not know).

// listResources passes one upstream's pages through with their cursors;
// with several upstreams it concatenates all their pages. Only the
// upstreams s's toolset reaches count.
func (s *Session) listResources(ctx context.Context, p *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	return listAcross(ctx, s, "resources", p, (*mcp.ClientSession).ListResources,
		func(cs *mcp.ClientSession, ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		},
		func(all []*mcp.Resource) *mcp.ListResourcesResult { return &mcp.ListResourcesResult{Resources: all} })
}

func (s *Session) listResourceTemplates(ctx context.Context, p *mcp.ListResourceTemplatesParams) (*mcp.ListResourceTemplatesResult, error) {
	return listAcross(ctx, s, "resource templates", p, (*mcp.ClientSession).ListResourceTemplates,
		func(cs *mcp.ClientSession, ctx context.Context, cursor string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.ResourceTemplates, r.NextCursor, nil
		},
		func(all []*mcp.ResourceTemplate) *mcp.ListResourceTemplatesResult {
			return &mcp.ListResourceTemplatesResult{ResourceTemplates: all}
		})
}

// listAcross is the shape of both resource lists: one upstream with
// resources answers the request itself (cursor and all); several are read
// page by page (with the limits of upstream.ReadPages) and concatenated,
// skipping one that fails.
func listAcross[P, R any, T any](ctx context.Context, s *Session, what string, p P,
	one func(*mcp.ClientSession, context.Context, P) (R, error),
	page func(cs *mcp.ClientSession, ctx context.Context, cursor string) ([]*T, string, error),
	result func([]*T) R,
) (R, error) {
	h := s.hub
	ups := s.resourceUpstreams()
	if len(ups) == 1 {
		cs, err := ups[0].Session()
		if err != nil {
			var zero R
			return zero, err
		}
		return one(cs, ctx, p)
	}
	all := []*T{}
	for _, u := range ups {
		cs, err := u.Session()
		if err != nil {
			continue
		}
		items, err := upstream.ReadPages(ctx, func(ctx context.Context, cursor string) ([]*T, string, error) {
			return page(cs, ctx, cursor)
		}, func(msg string) { h.log.Warn(fmt.Sprintf("server '%s' %s", u.Name(), fmt.Sprintf(msg, what))) })
		if err != nil {
			h.log.Warn("resource list failed", "server", u.Name(), "err", h.redact.Error(err))
		}
		all = append(all, items...)
	}
	return result(all), nil
}

// resourceUpstreams are the ready upstreams with resources that s's
// toolset reaches.
func (s *Session) resourceUpstreams() []*upstream.Upstream {
	ups := s.hub.readyUpstreams(func(c *mcp.ServerCapabilities) bool { return c.Resources != nil })
	return slices.DeleteFunc(ups, func(u *upstream.Upstream) bool { return !s.reaches(u.Name()) })
}

// MaxResourceURIBytes bounds the URI of a resources/read or subscribe
// request. Matching a URI against the upstreams' templates costs a few
// microseconds a byte (the uritemplate matcher allocates at every step),
// so a multi-MiB URI would hold a CPU for minutes; real URIs are short.
const MaxResourceURIBytes = 8 << 10

// resourceOwner finds the upstream serving a URI for s, among the
// upstreams its toolset reaches: the one that listed it, else one whose
// template matches, else the only upstream with resources. A URI listed
// only by servers out of reach is looked for as if no server had listed
// it, so the answer is the one an unknown URI gets.
func (s *Session) resourceOwner(uri string) (*upstream.Upstream, error) {
	h := s.hub
	if name, ok := h.Catalog().resources[uri]; ok && s.reaches(name) {
		return h.upstream(name)
	}
	if len(uri) > MaxResourceURIBytes {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resource URI of %d bytes is over the limit of %d bytes: no server serves such a URI", len(uri), MaxResourceURIBytes)}
	}
	ups := s.resourceUpstreams()
	if _, listed := h.Catalog().resources[uri]; listed {
		// Its first lister is out of reach; another may list it too.
		for _, u := range ups {
			if slices.ContainsFunc(u.Lists().Resources, func(r *mcp.Resource) bool { return r.URI == uri }) {
				return u, nil
			}
		}
	}
	for _, u := range ups {
		for _, t := range u.Lists().Templates {
			if tmpl, err := uritemplate.New(t.URITemplate); err == nil && tmpl.Match(uri) != nil {
				return u, nil
			}
		}
	}
	if len(ups) == 1 {
		return ups[0], nil
	}
	// data.uri as the spec's example has it (both eras).
	data, _ := json.Marshal(struct {
		URI string `json:"uri"`
	}{uri})
	return nil, &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf("Resource not found: no server lists '%s'", ShownName(uri)), Data: data}
}

// readResource reads a resource for session s: what the server asks for
// meanwhile (a stateless server's input_required) is answered by s.
func (s *Session) readResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	u, err := s.resourceOwner(p.URI)
	if err != nil {
		return nil, err
	}
	r := &UpstreamRequest{Method: "resources/read", Server: u.Name(), Meta: &p.Meta, Start: time.Now()}
	if suspensionOf(ctx) != nil {
		// A modern client's read: what the upstream asks meanwhile
		// reaches it as input_required (inputrequired.go).
		call := s.hub.routes.begin(ctx, s, u.Name())
		defer s.hub.routes.end(call)
	}
	ctx = s.upstreamStart(ctx, r)
	res, err := u.ReadResource(ctx, s, p)
	s.upstreamDone(ctx, r, res, err)
	return res, err
}

// checkListen refuses a subscriptions/listen request the hub does not
// serve: one in a session opened by a legacy initialize (that era
// subscribes with resources/subscribe, one URI a request; go-sdk would
// serve it, but the gateway counts a listen's URIs against the rate limit
// only by the modern era's Mcp-Method header), and one naming more URIs
// than protocol.max_listen_uris. The SDK then subscribes to the URIs one
// by one (subscribe), each held against max_subscriptions_per_principal,
// and undoes them all when one fails.
func (s *Session) checkListen(req *mcp.SubscriptionsListenRequest) error {
	if ip := req.Session.InitializeParams(); ip != nil && ip.ProtocolVersion < ModernProtocol {
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound,
			Message: fmt.Sprintf("subscriptions/listen is a method of MCP %s; this session speaks %s: use resources/subscribe", ModernProtocol, ip.ProtocolVersion)}
	}
	limit := s.hub.Config().Protocol.ListenURILimit()
	if n := req.Params.Notifications; n != nil && len(n.ResourceSubscriptions) > limit {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("subscriptions/listen names %d resource URIs, more than one request may (%d, protocol.max_listen_uris): listen to fewer", len(n.ResourceSubscriptions), limit)}
	}
	return nil
}

func (s *Session) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	return s.hub.subs.change(ctx, s, req.Session, req.Params.URI, true)
}

func (s *Session) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	return s.hub.subs.change(ctx, s, req.Session, req.Params.URI, false)
}

// subscriptions counts the client sessions subscribed to each resource
// URI at each upstream. Upstreams are shared, so the hub subscribes
// upstream for the first client session and unsubscribes after the last
// one leaves; the SDK filters resources/updated by each session's own
// subscriptions. A client session is the SDK's: a legacy client's one
// session, or one subscriptions/listen stream of a modern client (several
// may be open at once in one hub Session, each with its own URIs).
//
// The key has the upstream as well as the URI: two sessions whose
// toolsets reach different servers may send one URI to different owners
// (resourceOwner), and each owner is subscribed for its own sessions.
// held counts the subscriptions of each principal (Session.subscriber),
// which max_subscriptions_per_principal bounds.
type subscriptions struct {
	hub  *Hub
	mu   sync.Mutex
	by   map[subKey]map[*mcp.ServerSession]bool // the client sessions of each (upstream, URI)
	of   map[*mcp.ServerSession]*clientSubs     // what each client session subscribed to
	held map[string]int
}

type subKey struct{ server, uri string }

// unsubscribeTimeout bounds telling upstreams that the hub's last
// subscriptions to URIs ended: one client's unsubscribe, or all of a
// closed session's at once. Past it the upstream may go on sending
// updates, which no session asked for and the SDK drops.
const unsubscribeTimeout = 5 * time.Second

// clientSubs are one client session's subscriptions: URI -> upstream.
type clientSubs struct {
	session *Session
	servers map[string]string
}

func (sub *subscriptions) change(ctx context.Context, s *Session, ss *mcp.ServerSession, uri string, on bool) error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	mine := sub.of[ss]
	if !on {
		server, ok := "", false
		if mine != nil {
			server, ok = mine.servers[uri]
		}
		if !ok {
			return nil
		}
		// A listen stream ends by its cancellation: the upstream is
		// told all the same, within unsubscribeTimeout.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unsubscribeTimeout)
		defer cancel()
		sub.drop(ctx, mine, ss, subKey{server, uri})
		return nil
	}
	if mine != nil {
		if _, ok := mine.servers[uri]; ok {
			return nil
		}
	}
	u, err := s.resourceOwner(uri)
	if err != nil {
		return err
	}
	who := s.subscriber()
	if limit := sub.hub.Config().SubscriptionLimit(); sub.held[who] >= limit {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: fmt.Sprintf("%d resource subscriptions are open for this principal, the most it may hold (max_subscriptions_per_principal): end some (unsubscribe, or close a subscriptions/listen stream) first", limit)}
	}
	key := subKey{u.Name(), uri}
	if len(sub.by[key]) == 0 {
		if err := u.Subscribe(ctx, uri); err != nil {
			return err
		}
		sub.by[key] = map[*mcp.ServerSession]bool{}
	}
	sub.by[key][ss] = true
	if mine == nil {
		mine = &clientSubs{session: s, servers: map[string]string{}}
		sub.of[ss] = mine
	}
	mine.servers[uri] = key.server
	sub.held[who]++
	return nil
}

// drop ends client session ss's subscription to key, and the upstream's
// after the last one. Called with sub.mu held. An upstream that fails to
// unsubscribe (or is gone) is logged: the client's subscription ends all
// the same, and the hub sends it no more updates.
func (sub *subscriptions) drop(ctx context.Context, mine *clientSubs, ss *mcp.ServerSession, key subKey) {
	delete(mine.servers, key.uri)
	if len(mine.servers) == 0 {
		delete(sub.of, ss)
	}
	who := mine.session.subscriber()
	if sub.held[who]--; sub.held[who] <= 0 {
		delete(sub.held, who)
	}
	delete(sub.by[key], ss)
	if len(sub.by[key]) > 0 {
		return
	}
	delete(sub.by, key)
	if u, err := sub.hub.upstream(key.server); err == nil {
		if err := u.Unsubscribe(ctx, key.uri); err != nil {
			sub.hub.log.Warn("resources/unsubscribe failed", "server", key.server, "err", sub.hub.redact.Error(err))
		}
	}
}

// forget drops a closed session's subscriptions, telling the upstreams
// within one unsubscribeTimeout for them all.
func (sub *subscriptions) forget(s *Session) {
	ctx, cancel := context.WithTimeout(context.Background(), unsubscribeTimeout)
	defer cancel()
	sub.mu.Lock()
	defer sub.mu.Unlock()
	for ss, mine := range sub.of {
		if mine.session != s {
			continue
		}
		for uri, server := range mine.servers {
			sub.drop(ctx, mine, ss, subKey{server, uri})
		}
	}
}

// listPrompts serves the catalog's prompts of the servers s's toolset
// reaches under their exposed names.
func (s *Session) listPrompts() *mcp.ListPromptsResult {
	c := s.hub.Catalog()
	out := &mcp.ListPromptsResult{Prompts: make([]*mcp.Prompt, 0, len(c.Prompts))}
	for _, p := range c.Prompts {
		if s.reaches(p.Server) {
			out.Prompts = append(out.Prompts, p.Def)
		}
	}
	return out
}

// prompt finds the prompt of an exposed name among those s's toolset
// reaches; a prompt out of reach gets the error an unknown name gets.
func (s *Session) prompt(name string) (*Prompt, error) {
	pr, ok := s.hub.Catalog().Prompt(name)
	if !ok || !s.reaches(pr.Server) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt '%s'", ShownName(name))}
	}
	return pr, nil
}

// getPrompt gets a prompt for session s, which answers what the server
// asks for meanwhile, as readResource.
func (s *Session) getPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	h := s.hub
	pr, err := s.prompt(p.Name)
	if err != nil {
		return nil, err
	}
	u, err := h.upstream(pr.Server)
	if err != nil {
		return nil, err
	}
	fwd := *p
	fwd.Name = pr.Original
	r := &UpstreamRequest{Method: "prompts/get", Server: u.Name(), Meta: &fwd.Meta, Start: time.Now()}
	if suspensionOf(ctx) != nil {
		// A modern client's prompt: what the upstream asks meanwhile
		// reaches it as input_required (inputrequired.go).
		call := s.hub.routes.begin(ctx, s, u.Name())
		defer s.hub.routes.end(call)
	}
	ctx = s.upstreamStart(ctx, r)
	res, err := u.GetPrompt(ctx, s, &fwd)
	s.upstreamDone(ctx, r, res, err)
	return res, err
}

// complete routes completion/complete by its reference: a prompt by its
// exposed name, a resource template by the server that offers it.
func (s *Session) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	h := s.hub
	p := *req.Params
	ref := *p.Ref
	p.Ref = &ref
	var u *upstream.Upstream
	var err error
	switch ref.Type {
	case "ref/prompt":
		var pr *Prompt
		if pr, err = s.prompt(ref.Name); err != nil {
			return nil, err
		}
		ref.Name = pr.Original
		u, err = h.upstream(pr.Server)
	case "ref/resource":
		u, err = s.templateOwner(ref.URI)
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown reference type '%s'", ref.Type)}
	}
	if err != nil {
		return nil, err
	}
	cs, err := u.Session()
	if err != nil {
		return nil, err
	}
	return cs.Complete(ctx, &p)
}

// templateOwner finds the upstream offering a resource template for s,
// among those its toolset reaches, else the owner of the URI.
func (s *Session) templateOwner(uri string) (*upstream.Upstream, error) {
	for _, u := range s.hub.live.Load().upstreams {
		if !s.reaches(u.Name()) {
			continue
		}
		for _, t := range u.Lists().Templates {
			if t.URITemplate == uri {
				return u, nil
			}
		}
	}
	return s.resourceOwner(uri)
}

// setLevel passes a session's logging level on to every upstream that logs:
// to the session's own session with an HTTP upstream, and to the shared
// one, where the most recent setLevel wins (a stdio upstream's logs during
// anyone's calls); each session's own level still filters what it gets.
func (h *Hub) setLevel(ctx context.Context, s *Session, p *mcp.SetLoggingLevelParams) {
	for _, u := range h.readyUpstreams(func(c *mcp.ServerCapabilities) bool { return c.Logging != nil }) {
		if err := u.SetLoggingLevel(ctx, s, p); err != nil {
			h.log.Warn("logging/setLevel not forwarded", "server", u.Name(), "err", strings.TrimSpace(err.Error()))
		}
	}
}

// subscriber is whom s's subscriptions count against: its principal, ""
// for a local session.
func (s *Session) subscriber() string {
	if s.principal == nil {
		return ""
	}
	return s.principal.Key()
}
