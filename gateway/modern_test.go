package gateway

import (
	"context"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// modernTransports connect a go-sdk client of the 2026-07-28 era to the
// gateway over streamable HTTP, where every request stands alone (the hub's
// tests do the same over one persistent connection).
var modernTransports = []struct {
	name    string
	connect func(t *testing.T, h *Gateway, client *mcp.Client) *mcp.ClientSession
}{
	{"http", func(t *testing.T, h *Gateway, client *mcp.Client) *mcp.ClientSession {
		srv := httptest.NewServer(h.HTTPHandler(nil))
		t.Cleanup(srv.Close)
		cs, err := client.Connect(fixture.Context(t), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}},
}

// TestModernDiscovery: a modern client's tools/list is the eager tools,
// search_tools and call_tool, and no search changes it; search_tools shows
// what it found with full input schemas; the found tool is called through
// call_tool, and by its own name only with auto_load_on_call.
func TestModernDiscovery(t *testing.T) {
	for _, tr := range modernTransports {
		for _, autoLoad := range []bool{false, true} {
			name := tr.name
			if autoLoad {
				name += "/auto_load_on_call"
			}
			t.Run(name, func(t *testing.T) {
				h := newTestHub(t, fixture.ModernConfig(autoLoad), fixture.NewServers())
				cs := tr.connect(t, h, mcp.NewClient(&mcp.Implementation{Name: "modern-test", Version: "0"}, nil))
				if v := cs.InitializeResult().ProtocolVersion; v != hub.ModernProtocol {
					t.Fatalf("negotiated %q, want %s", v, hub.ModernProtocol)
				}
				fixture.CheckModernDiscovery(t, cs, autoLoad)
			})
		}
	}
}

// TestModernListen: an upstream's tool-list change reaches a modern client
// on its subscriptions/listen stream, and its tools/list then shows it.
func TestModernListen(t *testing.T) {
	for _, tr := range modernTransports {
		t.Run(tr.name, func(t *testing.T) {
			fx := fixture.NewServers()
			h := newTestHub(t, fixture.ModernConfig(false), fx)
			var changed atomic.Int64
			client := mcp.NewClient(&mcp.Implementation{Name: "modern-test", Version: "0"}, &mcp.ClientOptions{
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed.Add(1) },
			})
			cs := tr.connect(t, h, client)
			// The listen is acknowledged before Connect returns; the
			// session is registered with the hub by then too.
			fx.AddTool("clock", fixture.Tool{"tick", "Tick once.", `{"type":"object"}`})
			waitFor(t, "tools/list_changed on the listen stream", func() bool { return changed.Load() > 0 })
			if got := fixture.ToolNames(t, cs); !slices.Contains(got, "clock__tick") {
				t.Fatalf("tools/list after the upstream change = %v, want clock__tick in it", got)
			}
		})
	}
}
