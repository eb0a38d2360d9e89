package hub

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/gob"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/version"
)

// A session's tool list is the catalog's, seen through its toolset, plus
// the deferred tools it has loaded. Everything but the loaded set is the
// same for every session of a toolset, so it is built once per catalog and
// toolset (a toolView) and shared; a session holds only its loaded names
// and the catalog it last showed. tools/list is answered from these
// (listTools), never from tools registered with the session's go-sdk
// server: registering each tool with each session's server copied every
// definition into every session.

// toolView is what every session of one toolset lists from one catalog,
// before the tools it has loaded.
type toolView struct {
	// listed are the eager tools the toolset lets through and the
	// meta-tools (when it has deferred tools), sorted by name.
	listed []*mcp.Tool
	meta   []*mcp.Tool
	// instructions are the server instructions for a new session.
	instructions string
	// sum identifies listed: names and definitions.
	sum [sha256.Size]byte
}

// viewCache holds a catalog's views, one per toolset, built on first use.
type viewCache struct {
	mu     sync.Mutex
	m      map[*config.Toolset]*toolView
	modern map[*config.Toolset]*toolView // modernView's
}

// view returns the catalog's view for toolset ts (nil: every tool).
func (c *Catalog) view(h *Hub, ts *config.Toolset) *toolView {
	c.views.mu.Lock()
	defer c.views.mu.Unlock()
	if v, ok := c.views.m[ts]; ok {
		return v
	}
	v := &toolView{instructions: h.instructions(c, ts)}
	hasDeferred := false
	for _, t := range c.Tools {
		switch {
		case !allows(ts, t):
		case t.Deferred:
			hasDeferred = true
		case t.servable:
			v.listed = append(v.listed, t.Def)
		}
	}
	if hasDeferred {
		v.meta = h.metaTools(c, ts)
		v.listed = append(v.listed, v.meta...)
	}
	slices.SortFunc(v.listed, byName)
	sum := sha256.New()
	for _, def := range v.listed {
		fmt.Fprintf(sum, "%s\x00%s\x00", def.Name, fingerprint(def))
	}
	sum.Sum(v.sum[:0])
	if c.views.m == nil {
		c.views.m = map[*config.Toolset]*toolView{}
	}
	c.views.m[ts] = v
	return v
}

func byName(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) }

// isMeta reports whether name is one of the view's meta-tools.
func (v *toolView) isMeta(name string) bool {
	for _, mt := range v.meta {
		if mt.Name == name {
			return true
		}
	}
	return false
}

// sdkAccepts reports whether go-sdk would serve def, on a scratch server:
// it panics on schemas it dislikes (an invalid x-mcp-header annotation,
// say). Such a tool is listed by no session: one bad upstream tool must not
// take a session down. Checked once per catalog.
func sdkAccepts(scratch *mcp.Server, def *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("rejected by the MCP SDK: %v", r)
		}
	}()
	scratch.AddTool(def, answeredByRoute)
	scratch.RemoveTools(def.Name)
	return nil
}

// newScratchServer is the server sdkAccepts registers tools with; its
// complaints (an unusual tool name, say) are not the hub's to log.
func newScratchServer() *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "mcp-hub-check", Version: version.Version},
		&mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
}

// listed returns the session's tool list in c, sorted by name.
func (s *Session) listed(c *Catalog) []*mcp.Tool {
	v := c.view(s.hub, s.toolset.Load())
	s.mu.Lock()
	var own []*mcp.Tool
	for name := range s.loaded {
		if t, ok := c.Tool(name); ok && t.Deferred && t.servable && s.visible(t) {
			own = append(own, t.loadedDef)
		}
	}
	s.mu.Unlock()
	if len(own) == 0 {
		return v.listed
	}
	slices.SortFunc(own, byName)
	out := make([]*mcp.Tool, 0, len(v.listed)+len(own))
	i, j := 0, 0
	for i < len(v.listed) || j < len(own) {
		if j == len(own) || (i < len(v.listed) && v.listed[i].Name < own[j].Name) {
			out = append(out, v.listed[i])
			i++
		} else {
			out = append(out, own[j])
			j++
		}
	}
	return out
}

// listSum identifies the session's tool list in c: a catalog rebuild that
// leaves it as it was sends the session no list_changed.
func (s *Session) listSum(c *Catalog) [sha256.Size]byte {
	sum := sha256.New()
	v := c.view(s.hub, s.toolset.Load())
	sum.Write(v.sum[:])
	s.mu.Lock()
	names := sortedKeys(s.loaded)
	s.mu.Unlock()
	for _, name := range names {
		if t, ok := c.Tool(name); ok && t.Deferred && t.servable && s.visible(t) {
			fmt.Fprintf(sum, "%s\x00%s\x00", t.Name, t.fingerprint)
		}
	}
	var out [sha256.Size]byte
	sum.Sum(out[:0])
	return out
}

// shows reports whether the session lists the tool name.
func (s *Session) shows(name string) bool {
	s.mu.Lock()
	c, loaded := s.cat, s.loaded[name]
	s.mu.Unlock()
	if c == nil {
		return false
	}
	if c.view(s.hub, s.toolset.Load()).isMeta(name) {
		return true
	}
	t, ok := c.Tool(name)
	return ok && t.servable && s.visible(t) && (!t.Deferred || loaded)
}

// listTools answers tools/list as go-sdk would from tools registered with
// the session's server: sorted by name, pages of mcp.DefaultPageSize,
// cursors of the same form, -32602 for one that cannot be read.
// A modern client's list is modernToolList's, which no request changes.
func (s *Session) listTools(p *mcp.ListToolsParams, modern bool) (*mcp.ListToolsResult, error) {
	s.mu.Lock()
	c := s.cat
	s.mu.Unlock()
	var tools []*mcp.Tool
	switch {
	case c == nil:
	case modern:
		tools = s.modernToolList(c)
	default:
		tools = s.listed(c)
	}
	if p != nil && p.Cursor != "" {
		last, err := decodeCursor(p.Cursor)
		if err != nil {
			// The spec: an invalid cursor is invalid params.
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid params"}
		}
		i, _ := slices.BinarySearchFunc(tools, last, func(t *mcp.Tool, name string) int {
			if t.Name <= name {
				return -1
			}
			return 1
		})
		tools = tools[i:]
	}
	res := &mcp.ListToolsResult{Tools: []*mcp.Tool{}} // [] rather than null
	res.CacheScope = "public"                         // as the SDK sets it
	if modern {
		res.CacheScope = s.cacheScope()
	}
	if len(tools) > mcp.DefaultPageSize {
		tools = tools[:mcp.DefaultPageSize]
		next, err := encodeCursor(tools[len(tools)-1].Name)
		if err != nil {
			return nil, err
		}
		res.NextCursor = next
	}
	res.Tools = append(res.Tools, tools...)
	return res, nil
}

// pageToken is go-sdk's cursor: the name of the last tool of a page, gob
// encoded, then base64 (TestToolListCursorsAsSDK).
type pageToken struct {
	LastUID string
}

func encodeCursor(last string) (string, error) {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(pageToken{LastUID: last}); err != nil {
		return "", fmt.Errorf("failed to encode page token: %w", err)
	}
	return base64.URLEncoding.EncodeToString(buf.Bytes()), nil
}

func decodeCursor(cursor string) (string, error) {
	b, err := base64.URLEncoding.DecodeString(cursor)
	if err != nil {
		return "", err
	}
	var token pageToken
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&token); err != nil {
		return "", err
	}
	return token.LastUID, nil
}

// notifyToolsChanged makes the SDK send the session a tools/list_changed
// (debounced): it only does so when its own list changes, so a placeholder
// is added and removed.
func (s *Session) notifyToolsChanged() {
	const name = "mcp-hub-placeholder"
	s.server.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, answeredByRoute)
	s.server.RemoveTools(name)
}

// answeredByRoute is the handler AddTool requires. The SDK never calls it:
// route answers every tools/call first, so that upstream results pass
// through as bytes rather than as an *mcp.CallToolResult.
func answeredByRoute(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return nil, fmt.Errorf("mcp-hub: a tool call reached the SDK's handler instead of the hub's router")
}
