package hub

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// callUpstream forwards one call. What happens to each part:
//   - name: replaced by the upstream's original name;
//   - arguments: passed as raw bytes, never decoded;
//   - _meta: passed through, except a progress token, which is swapped for a
//     hub-unique one and swapped back on every progress notification;
//   - cancellation: the downstream request's context cancels the upstream
//     call (notifications/cancelled goes upstream);
//   - result: returned as the upstream sent it (isError included), as its
//     very bytes from a stdio upstream (upstream.RawResult);
//   - session: an HTTP upstream runs the call in this session's own
//     upstream session, so what it sends meanwhile is this session's (a
//     legacy session's; a modern Session is shared, see router);
//   - what the upstream sends during the call reaches this call's client
//     only (router), and a 2026-07-28 upstream's input requests, which
//     come back in the call's own context, reach this call exactly;
//   - errors: a JSON-RPC error from the upstream is passed on with its code;
//     a server that is down, restarting or timed out gives an isError
//     result that says so and invites a retry.
func (s *Session) callUpstream(ctx context.Context, t *Tool, in *mcp.CallToolParamsRaw) (mcp.Result, error) {
	h := s.hub
	u, err := h.upstream(t.Server)
	if err != nil {
		return nil, err
	}
	params := &mcp.CallToolParams{Name: t.Original, Arguments: in.Arguments}
	if len(in.Arguments) == 0 {
		params.Arguments = nil
	}
	// A copy, for the keys added on the way out, sized to what is left of
	// the client's _meta (a modern request's hop keys are gone already:
	// maps.Clone would keep the room they took).
	if len(in.Meta) > 0 {
		params.Meta = make(mcp.Meta, len(in.Meta))
		maps.Copy(params.Meta, in.Meta)
	}
	call := h.routes.begin(ctx, s, t.Server)
	defer h.routes.end(call)
	if token := in.GetProgressToken(); token != nil {
		params.SetProgressToken(h.routes.mapProgress(call, token))
	}
	r := &UpstreamRequest{Method: "tools/call", Server: t.Server, Tool: t, Meta: &params.Meta, Start: time.Now()}
	callCtx := s.upstreamStart(withCall(ctx, call), r)
	res, err := u.CallTool(callCtx, s, params)
	s.upstreamDone(callCtx, r, res, err)
	if err != nil {
		var rpcErr *jsonrpc.Error
		switch {
		case errors.As(err, &rpcErr):
			return nil, rpcErr
		case ctx.Err() != nil:
			return nil, ctx.Err()
		}
		return errorResult(h.redact.String(fmt.Sprintf("Error: %v", err))), nil
	}
	return res, nil
}
