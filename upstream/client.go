package upstream

import (
	"context"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/version"
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

// clientCapabilities are what the hub tells servers it supports: all of
// it, because any downstream client may turn out to.
func clientCapabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{
		RootsV2:     &mcp.RootCapabilities{ListChanged: true},
		Sampling:    &mcp.SamplingCapabilities{},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
	}
}

// clientInfo is how the hub names itself to servers.
func clientInfo() *mcp.Implementation {
	return &mcp.Implementation{Name: "mcp-hub", Version: version.Version}
}

// newClient builds the go-sdk client for one connection. It advertises
// every client capability, because any downstream client may turn out to
// support them; a downstream that does not gets the upstream's request
// refused with a clear error.
//
// owner is nil for the shared connection, and the downstream session for
// an owned one (see owned.go): what the server sends on it is handed to
// the Listener with the owner in its context, and list changes are left
// to the shared connection. counter is the connection's own (see
// notificationCounter).
func (u *Upstream) newClient(owner any, counter *notificationCounter) *mcp.Client {
	mark := func(ctx context.Context) context.Context {
		if owner == nil {
			return ctx
		}
		return context.WithValue(ctx, ownerKey{}, owner)
	}
	opts := &mcp.ClientOptions{
		Logger:       u.opts.SDKLogger.With("server", u.cfg.Name),
		Capabilities: clientCapabilities(),
		ResourceUpdatedHandler: func(ctx context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			u.notified(mark(ctx), NotifyResourceUpdated, req.Params)
		},
		LoggingMessageHandler: func(ctx context.Context, req *mcp.LoggingMessageRequest) {
			defer counter.forwardedOne()
			u.notified(mark(ctx), NotifyLog, req.Params)
		},
		ProgressNotificationHandler: func(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
			defer counter.forwardedOne()
			u.notified(mark(ctx), NotifyProgress, req.Params)
		},
		// Keep the SDK's automatic multi-round-trip handling out of the way:
		// the hub forwards what a server asks for (callWithInput).
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
	if owner == nil {
		// List changes are the shared connection's to watch. The handlers
		// are also what makes the SDK open a subscriptions/listen stream to
		// a stateless server, which an owned session does not need.
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) { u.listChanged() }
		opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) { u.listChanged() }
		opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) { u.listChanged() }
	}
	client := mcp.NewClient(clientInfo(), opts)
	client.AddSendingMiddleware(hopMetaMiddleware)
	// Server-to-client requests are intercepted before the SDK's own
	// handlers: those validate (and reject) elicitation schemas that the
	// downstream client may well accept, and a proxy must not judge.
	client.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case MethodCreateMessage, MethodElicit, MethodListRoots:
				return u.request(mark(ctx), method, req.GetParams())
			}
			return next(ctx, method, req)
		}
	})
	return client
}
