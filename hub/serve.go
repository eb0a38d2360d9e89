package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// ServeStdio serves one session over r and w (the process's stdin and
// stdout) until the client disconnects or ctx ends.
func (h *Hub) ServeStdio(ctx context.Context, toolset string, r io.ReadCloser, w io.WriteCloser) error {
	s, err := h.NewSession(SessionOptions{Toolset: toolset})
	if err != nil {
		return err
	}
	maxLine := int(h.Config().RequestLimit())
	out := &lockedWriter{w: w, log: h.log}
	in := newStdinGuard(ctx, r, out, maxLine, h.log)
	// The guard already bounds lines; the SDK's own limit stays as a backstop.
	defer s.end()
	return s.server.Run(ctx, &mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: maxLine + 16})
}

// Connect opens a session to the hub over an in-memory transport and
// returns the client side: the chat loop uses it, so that it sees exactly
// what an external client sees. The session belongs to ctx's principal
// (WithPrincipal; the chat API's caller), within its toolsets.
func (h *Hub) Connect(ctx context.Context, toolset string, client *mcp.Client) (*mcp.ClientSession, error) {
	p := PrincipalFrom(ctx)
	toolset, err := h.ToolsetFor(p, toolset)
	if err != nil {
		return nil, err
	}
	s, err := h.NewSession(SessionOptions{Toolset: toolset, Principal: p})
	if err != nil {
		return nil, err
	}
	// The chat re-lists before each model call, after a call's result:
	// that result must not wait for it.
	s.notice.relistWait = 0
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.connect(ctx, st); err != nil {
		return nil, fmt.Errorf("connect to hub: %w", err)
	}
	// The chat loop re-lists before each model call so that tools
	// search_tools loads are offered: the legacy era's discovery, whatever
	// protocol.modern says.
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, fmt.Errorf("connect to hub: %w", err)
	}
	return cs, nil
}

// FirstToolsList is what a new client session of the toolset receives on
// its first tools/list, one JSON definition per tool, as the session's
// server marshals it: the toolset's view of the catalog, since a new
// session has loaded nothing. Token accounting counts these.
func (h *Hub) FirstToolsList(toolset string) ([]json.RawMessage, error) {
	ts, err := h.Toolset(toolset)
	if err != nil {
		return nil, err
	}
	tools := h.Catalog().view(h, ts).listed // every page
	defs := make([]json.RawMessage, len(tools))
	for i, def := range tools {
		if defs[i], err = json.Marshal(def); err != nil {
			return nil, err
		}
	}
	return defs, nil
}

// AllToolDefinitions are the definitions of every catalog tool: what a
// plain aggregator (discovery off) would list.
func (h *Hub) AllToolDefinitions() ([]json.RawMessage, error) {
	var defs []json.RawMessage
	for _, t := range h.Catalog().Tools {
		b, err := json.Marshal(t.Def)
		if err != nil {
			return nil, err
		}
		defs = append(defs, b)
	}
	return defs, nil
}
