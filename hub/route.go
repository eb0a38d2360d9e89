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
// (logging/setLevel).
func (s *Session) route(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			s.notice.listing(ctx)
			return s.listTools(req.(*mcp.ListToolsRequest).Params)
		case "tools/call":
			r := req.(*mcp.CallToolRequest)
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
			return s.hub.listResources(ctx, req.(*mcp.ListResourcesRequest).Params)
		case "resources/templates/list":
			return s.hub.listResourceTemplates(ctx, req.(*mcp.ListResourceTemplatesRequest).Params)
		case "resources/read":
			return s.readResource(ctx, req.(*mcp.ReadResourceRequest).Params)
		case "prompts/list":
			return s.hub.listPrompts(), nil
		case "prompts/get":
			return s.getPrompt(ctx, req.(*mcp.GetPromptRequest).Params)
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
