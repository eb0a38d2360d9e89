package hub

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// modernTransports connect a go-sdk client of the 2026-07-28 era to a hub
// over one persistent connection (in memory, as over stdio); the gateway's
// tests do the same over streamable HTTP, where every request stands alone.
var modernTransports = []struct {
	name    string
	connect func(t *testing.T, h *Hub, client *mcp.Client) *mcp.ClientSession
}{
	{"memory", func(t *testing.T, h *Hub, client *mcp.Client) *mcp.ClientSession {
		s, err := h.NewSession(SessionOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.connect(fixture.Context(t), st); err != nil {
			t.Fatal(err)
		}
		cs, err := client.Connect(fixture.Context(t), ct, nil)
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
				if v := cs.InitializeResult().ProtocolVersion; v != ModernProtocol {
					t.Fatalf("negotiated %q, want %s", v, ModernProtocol)
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

// TestProtocolConfig: protocol.modern defaults to off, and decides whether
// a session's server offers 2026-07-28; an unknown key under protocol is
// refused.
func TestProtocolConfig(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		modern  bool
		wantErr bool
	}{
		{"", config.DefaultModern, false},
		{"protocol:\n  modern: true\n", true, false},
		{"protocol:\n  modern: false\n", false, false},
		{"protocol:\n  moden: true\n", false, true},
	} {
		cfg, err := ParseConfig("hub.yaml", []byte("servers:\n  a:\n    command: x\n"+tc.doc))
		if tc.wantErr {
			if err == nil {
				t.Errorf("%q: parsed, want an error", tc.doc)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		if got := cfg.Protocol.ModernEnabled(); got != tc.modern {
			t.Errorf("%q: ModernEnabled %t, want %t", tc.doc, got, tc.modern)
		}
		if got := slices.Contains(supportedVersions(cfg.Protocol.ModernEnabled()), ModernProtocol); got != tc.modern {
			t.Errorf("%q: 2026-07-28 offered %t, want %t", tc.doc, got, tc.modern)
		}
	}
}
