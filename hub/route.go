package hub

import (
	"context"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// route is the session's receiving middleware. It answers tools/list from
// the catalog's shared view for the session's toolset plus its loaded
// tools (toollist.go), tools/call (so that an upstream's result passes
// through as bytes), what the hub proxies without registering it
// (resources, prompts), and what must also reach upstreams
// (logging/setLevel). A request of the 2026-07-28 era gets that era's
// answers (modern.go): a tools/list no call changes, tools/call through
// callModern, resultType and cacheScope on what the hub passes through.
func (s *Session) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		modern := isModern(req)
		if modern {
			s.beginModern(serverSessionOf(req))
			stripEraMeta(method, req)
		}
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
		case "tools/list":
			if modern {
				return s.listTools(req.(*mcp.ListToolsRequest).Params, true)
			}
			s.notice.listing(ctx)
			return s.listTools(req.(*mcp.ListToolsRequest).Params, false)
		case "tools/call":
			r := req.(*mcp.CallToolRequest)
			if modern {
				return s.callModern(withRequestSession(ctx, req), r)
			}
			shown := s.shows(r.Params.Name)
			if !shown || isMetaTool(r.Params.Name) {
				// It may load tools: then its result waits for the
				// client's re-list (toolsNotice).
				ctx = s.notice.forCall(ctx)
				defer s.notice.awaitRelist(ctx)
			}
			if !shown {
				return s.callHidden(ctx, r)
			}
			return s.handleTool(ctx, r)
		case "resources/list":
			// An upstream's "public" does not hold for what a
			// principal's toolset filtered: private wins (cacheScope).
			res, err := s.listResources(ctx, req.(*mcp.ListResourcesRequest).Params)
			if modern && err == nil && (res.CacheScope == "" || s.cacheScope() == "private") {
				c := *res
				c.CacheScope = s.cacheScope()
				res = &c
			}
			return res, err
		case "resources/templates/list":
			res, err := s.listResourceTemplates(ctx, req.(*mcp.ListResourceTemplatesRequest).Params)
			if modern && err == nil && (res.CacheScope == "" || s.cacheScope() == "private") {
				c := *res
				c.CacheScope = s.cacheScope()
				res = &c
			}
			return res, err
		case "resources/read":
			r := req.(*mcp.ReadResourceRequest)
			if modern {
				p := r.Params
				return s.runModern(withRequestSession(ctx, req), modernRequest{"resources/read " + p.URI, p.RequestState, p.InputResponses, r.ClientCapabilities()},
					func(ctx context.Context) (mcp.Result, error) { return s.readResource(ctx, p) })
			}
			return s.readResource(ctx, r.Params)
		case "prompts/list":
			res := s.listPrompts()
			if modern && (res.CacheScope == "" || s.cacheScope() == "private") {
				c := *res
				c.CacheScope = s.cacheScope()
				res = &c
			}
			return res, nil
		case "prompts/get":
			r := req.(*mcp.GetPromptRequest)
			if modern {
				p := r.Params
				return s.runModern(withRequestSession(ctx, req), modernRequest{"prompts/get " + p.Name, p.RequestState, p.InputResponses, r.ClientCapabilities()},
					func(ctx context.Context) (mcp.Result, error) { return s.getPrompt(ctx, p) })
			}
			return s.getPrompt(ctx, r.Params)
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
}
