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
	relist := func(context.Context) {
		if owner == nil {
			u.listChanged()
		}
	}
	opts := &mcp.ClientOptions{
		Logger: u.opts.SDKLogger.With("server", u.cfg.Name),
		Capabilities: &mcp.ClientCapabilities{
			RootsV2:     &mcp.RootCapabilities{ListChanged: true},
			Sampling:    &mcp.SamplingCapabilities{},
			Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
		},
		ToolListChangedHandler:     func(ctx context.Context, _ *mcp.ToolListChangedRequest) { relist(ctx) },
		PromptListChangedHandler:   func(ctx context.Context, _ *mcp.PromptListChangedRequest) { relist(ctx) },
		ResourceListChangedHandler: func(ctx context.Context, _ *mcp.ResourceListChangedRequest) { relist(ctx) },
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
		// the hub forwards requests, it does not answer them.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-hub", Version: version.Version}, opts)
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
