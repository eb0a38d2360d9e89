package hub

import (
	"context"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// route is the innermost layer of the session's receiving chain
// (Session.receiving). It decides a request's protocol era once, here,
// and hands the request to that era's routing: routeLegacy for a request
// of 2025-11-25 or older, routeModern for one of 2026-07-28 (modern.go).
// Each answers what the hub answers itself: tools/list from the catalog's
// shared view for the session's toolset (plus, for a legacy session, its
// loaded tools: toollist.go), tools/call (toolcall.go, so that an
// upstream's result passes through as bytes), and what the hub proxies
// without registering it (resources, prompts: passthrough.go). What
// neither era answers itself goes to routeEither, then to go-sdk.
func (s *Session) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if isModern(req) {
			s.beginModern(serverSessionOf(req))
			stripEraMeta(method, req)
			return s.routeModern(ctx, next, method, req)
		}
		return s.routeLegacy(ctx, next, method, req)
	}
}

// routeLegacy routes a request of the legacy era: a tools/list that shows
// the session's loaded tools and lets a held tools/call answer
// (toolsNotice), a tools/call through callLegacy.
func (s *Session) routeLegacy(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	switch method {
	case "tools/list":
		s.notice.listing(ctx)
		return s.listTools(req.(*mcp.ListToolsRequest).Params, false)
	case "tools/call":
		return s.callLegacy(ctx, req.(*mcp.CallToolRequest))
	case "resources/list":
		return s.listResources(ctx, req.(*mcp.ListResourcesRequest).Params)
	case "resources/templates/list":
		return s.listResourceTemplates(ctx, req.(*mcp.ListResourceTemplatesRequest).Params)
	case "resources/read":
		return s.readResource(ctx, req.(*mcp.ReadResourceRequest).Params)
	case "prompts/list":
		return s.listPrompts(), nil
	case "prompts/get":
		return s.getPrompt(ctx, req.(*mcp.GetPromptRequest).Params)
	}
	return s.routeEither(ctx, next, method, req)
}

// routeModern routes a request of the 2026-07-28 era: a tools/list no call
// changes; tools/call, resources/read and prompts/get run under runModern
// (inputrequired.go), which answers input_required with what their
// upstream asks of the client; and the lists carry a cacheScope.
func (s *Session) routeModern(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	switch method {
	case "tools/list":
		return s.listTools(req.(*mcp.ListToolsRequest).Params, true)
	case "tools/call":
		r := req.(*mcp.CallToolRequest)
		p := r.Params
		return s.runModern(withRequestSession(ctx, req), modernRequest{"tools/call " + p.Name, p.RequestState, p.InputResponses, r.ClientCapabilities()},
			func(ctx context.Context) (mcp.Result, error) { return s.callModern(ctx, r) })
	case "resources/list":
		res, err := s.listResources(ctx, req.(*mcp.ListResourcesRequest).Params)
		if err != nil {
			return nil, err
		}
		return scoped(s, res, func(r *mcp.ListResourcesResult) *string { return &r.CacheScope }), nil
	case "resources/templates/list":
		res, err := s.listResourceTemplates(ctx, req.(*mcp.ListResourceTemplatesRequest).Params)
		if err != nil {
			return nil, err
		}
		return scoped(s, res, func(r *mcp.ListResourceTemplatesResult) *string { return &r.CacheScope }), nil
	case "resources/read":
		r := req.(*mcp.ReadResourceRequest)
		p := r.Params
		return s.runModern(withRequestSession(ctx, req), modernRequest{"resources/read " + p.URI, p.RequestState, p.InputResponses, r.ClientCapabilities()},
			func(ctx context.Context) (mcp.Result, error) { return s.readResource(ctx, p) })
	case "prompts/list":
		return scoped(s, s.listPrompts(), func(r *mcp.ListPromptsResult) *string { return &r.CacheScope }), nil
	case "prompts/get":
		r := req.(*mcp.GetPromptRequest)
		p := r.Params
		return s.runModern(withRequestSession(ctx, req), modernRequest{"prompts/get " + p.Name, p.RequestState, p.InputResponses, r.ClientCapabilities()},
			func(ctx context.Context) (mcp.Result, error) { return s.getPrompt(ctx, p) })
	}
	return s.routeEither(ctx, next, method, req)
}

// scoped returns a 2026-07-28 list result with the session's cacheScope
// where the upstreams left it unset or the session's is private: an
// upstream's "public" does not hold for what a principal's toolset
// filtered, so private wins. A result that changes is a copy; the one
// given may be shared.
func scoped[R any](s *Session, res *R, scope func(*R) *string) *R {
	if *scope(res) != "" && s.cacheScope() != "private" {
		return res
	}
	c := *res
	*scope(&c) = s.cacheScope()
	return &c
}

// routeEither routes what is the same in both eras: go-sdk answers it,
// and the hub adds to its answer (server/discover's instructions), checks
// it first (subscriptions/listen), or passes it on to its upstreams too
// (logging/setLevel).
func (s *Session) routeEither(ctx context.Context, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	switch method {
	case "server/discover":
		res, err := next(ctx, method, req)
		if d, ok := res.(*mcp.DiscoverResult); ok && err == nil {
			s.mu.Lock()
			c := s.cat
			s.mu.Unlock()
			if c != nil {
				d.Instructions = c.modernView(s.hub, s.toolset.Load()).instructions
			}
		}
		return res, err
	case "subscriptions/listen":
		if err := s.checkListen(req.(*mcp.SubscriptionsListenRequest)); err != nil {
			return nil, err
		}
		return next(ctx, method, req)
	case "logging/setLevel":
		res, err := next(ctx, method, req)
		if err == nil {
			s.hub.setLevel(ctx, s, req.GetParams().(*mcp.SetLoggingLevelParams))
		}
		return res, err
	}
	return next(ctx, method, req)
}
