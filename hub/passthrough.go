package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// listResources passes one upstream's pages through with their cursors;
// with several upstreams it concatenates all their pages.
func (h *Hub) listResources(ctx context.Context, p *mcp.ListResourcesParams) (*mcp.ListResourcesResult, error) {
	return listAcross(ctx, h, "resources", p, (*mcp.ClientSession).ListResources,
		func(cs *mcp.ClientSession, ctx context.Context, cursor string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return nil, "", err
			}
			return r.Resources, r.NextCursor, nil
		},
		func(all []*mcp.Resource) *mcp.ListResourcesResult { return &mcp.ListResourcesResult{Resources: all} })
}

func (h *Hub) listResourceTemplates(ctx context.Context, p *mcp.ListResourceTemplatesParams) (*mcp.ListResourceTemplatesResult, error) {
	return listAcross(ctx, h, "resource templates", p, (*mcp.ClientSession).ListResourceTemplates,
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
func listAcross[P, R any, T any](ctx context.Context, h *Hub, what string, p P,
	one func(*mcp.ClientSession, context.Context, P) (R, error),
	page func(cs *mcp.ClientSession, ctx context.Context, cursor string) ([]*T, string, error),
	result func([]*T) R,
) (R, error) {
	ups := h.readyUpstreams(func(c *mcp.ServerCapabilities) bool { return c.Resources != nil })
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

// MaxResourceURIBytes bounds the URI of a resources/read or subscribe
// request. Matching a URI against the upstreams' templates costs a few
// microseconds a byte (the uritemplate matcher allocates at every step),
// so a multi-MiB URI would hold a CPU for minutes; real URIs are short.
const MaxResourceURIBytes = 8 << 10

// resourceOwner finds the upstream serving a URI: the one that listed it,
// else one whose template matches, else the only upstream with resources.
func (h *Hub) resourceOwner(uri string) (*upstream.Upstream, error) {
	if name, ok := h.Catalog().resources[uri]; ok {
		return h.upstream(name)
	}
	if len(uri) > MaxResourceURIBytes {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resource URI of %d bytes is over the limit of %d bytes: no server serves such a URI", len(uri), MaxResourceURIBytes)}
	}
	ups := h.readyUpstreams(func(c *mcp.ServerCapabilities) bool { return c.Resources != nil })
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
	return nil, &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Message: fmt.Sprintf("Resource not found: no server lists '%s'", shownName(uri)), Data: data}
}

// readResource reads a resource for session s: what the server asks for
// meanwhile (a stateless server's input_required) is answered by s.
func (s *Session) readResource(ctx context.Context, p *mcp.ReadResourceParams) (*mcp.ReadResourceResult, error) {
	u, err := s.hub.resourceOwner(p.URI)
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

func (s *Session) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	return s.hub.subs.change(ctx, s, req.Params.URI, true)
}

func (s *Session) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	return s.hub.subs.change(ctx, s, req.Params.URI, false)
}

// subscriptions counts downstream sessions per resource URI. Upstreams are
// shared, so the hub subscribes upstream for the first session and
// unsubscribes after the last one leaves; the SDK filters
// resources/updated by each session's own subscriptions.
type subscriptions struct {
	hub *Hub
	mu  sync.Mutex
	by  map[string]map[*Session]bool // uri -> sessions
}

func (sub *subscriptions) change(ctx context.Context, s *Session, uri string, on bool) error {
	sub.mu.Lock()
	defer sub.mu.Unlock()
	sessions := sub.by[uri]
	if on == sessions[s] {
		return nil
	}
	first, last := on && len(sessions) == 0, !on && len(sessions) == 1
	if first || last {
		u, err := sub.hub.resourceOwner(uri)
		if err != nil {
			return err
		}
		if first {
			err = u.Subscribe(ctx, uri)
		} else {
			err = u.Unsubscribe(ctx, uri)
		}
		if err != nil {
			return err
		}
	}
	if on {
		if sessions == nil {
			sessions = map[*Session]bool{}
			sub.by[uri] = sessions
		}
		sessions[s] = true
	} else {
		delete(sessions, s)
	}
	return nil
}

// forget drops a closed session's subscriptions.
func (sub *subscriptions) forget(s *Session) {
	sub.mu.Lock()
	var uris []string
	for uri, sessions := range sub.by {
		if sessions[s] {
			uris = append(uris, uri)
		}
	}
	sub.mu.Unlock()
	for _, uri := range uris {
		sub.change(context.Background(), s, uri, false)
	}
}

// listPrompts serves the catalog's prompts under their exposed names.
func (h *Hub) listPrompts() *mcp.ListPromptsResult {
	c := h.Catalog()
	out := &mcp.ListPromptsResult{Prompts: make([]*mcp.Prompt, 0, len(c.Prompts))}
	for _, p := range c.Prompts {
		out.Prompts = append(out.Prompts, p.Def)
	}
	return out
}

// getPrompt gets a prompt for session s, which answers what the server
// asks for meanwhile, as readResource.
func (s *Session) getPrompt(ctx context.Context, p *mcp.GetPromptParams) (*mcp.GetPromptResult, error) {
	h := s.hub
	pr, ok := h.Catalog().Prompt(p.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt '%s'", shownName(p.Name))}
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
		pr, ok := h.Catalog().Prompt(ref.Name)
		if !ok {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt '%s'", shownName(ref.Name))}
		}
		ref.Name = pr.Original
		u, err = h.upstream(pr.Server)
	case "ref/resource":
		u, err = h.templateOwner(ref.URI)
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

func (h *Hub) templateOwner(uri string) (*upstream.Upstream, error) {
	for _, u := range h.live.Load().upstreams {
		for _, t := range u.Lists().Templates {
			if t.URITemplate == uri {
				return u, nil
			}
		}
	}
	return h.resourceOwner(uri)
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
