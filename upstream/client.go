package upstream

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server-to-client methods that the hub forwards to a downstream session.
const (
	MethodCreateMessage = "sampling/createMessage"
	MethodElicit        = "elicitation/create"
	MethodListRoots     = "roots/list"
)

// Notifications handed to the Listener.
const (
	NotifyLog             = "notifications/message"
	NotifyProgress        = "notifications/progress"
	NotifyResourceUpdated = "notifications/resources/updated"
)

// newClient builds the go-sdk client for one connection. It advertises
// every client capability, because any downstream client may turn out to
// support them; a downstream that does not gets the upstream's request
// refused with a clear error.
func (u *Upstream) newClient() *mcp.Client {
	opts := &mcp.ClientOptions{
		Logger: u.opts.SDKLogger.With("server", u.cfg.Name),
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) {
			go u.relist(context.WithoutCancel(ctx))
		},
		PromptListChangedHandler: func(ctx context.Context, _ *mcp.PromptListChangedRequest) {
			go u.relist(context.WithoutCancel(ctx))
		},
		ResourceListChangedHandler: func(ctx context.Context, _ *mcp.ResourceListChangedRequest) {
			go u.relist(context.WithoutCancel(ctx))
		},
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			u.listener.UpstreamNotified(ctx, u, NotifyResourceUpdated, req.Params)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			defer u.counter.forwardedOne()
			u.listener.UpstreamNotified(ctx, u, NotifyLog, req.Params)
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			defer u.counter.forwardedOne()
			u.listener.UpstreamNotified(ctx, u, NotifyProgress, req.Params)
		},
		// Keep the SDK's automatic multi-round-trip handling out of the way:
		// the hub forwards requests, it does not answer them.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-hub", Version: Version}, opts)
	// Server-to-client requests are intercepted before the SDK's own
	// handlers: those validate (and reject) elicitation schemas that the
	// downstream client may well accept, and a proxy must not judge.
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case MethodCreateMessage, MethodElicit, MethodListRoots:
				return u.listener.UpstreamRequest(ctx, u, method, req.GetParams())
			}
			return next(ctx, method, req)
		}
	})
	return client
}

// Version is the hub's version, sent as clientInfo and serverInfo.
const Version = "0.1.0"
