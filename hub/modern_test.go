package hub

import (
	"slices"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// connectModern connects a go-sdk client of the 2026-07-28 era to a hub
// over one persistent connection (in memory, as over stdio); the gateway's
// tests run the same scenarios over streamable HTTP, where every request
// stands alone.
func connectModern(t *testing.T, cfg *config.Config, fx *fixture.Servers, client *mcp.Client) *mcp.ClientSession {
	cs, err := client.Connect(fixture.Context(t), agSessionTransport(t, newTestHub(t, cfg, fx)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestModernDiscovery: fixture.CheckModernDiscovery in memory.
func TestModernDiscovery(t *testing.T) { fixture.RunModernDiscovery(t, connectModern) }

// TestModernListen: an upstream's tool-list change reaches a modern client
// on its subscriptions/listen stream, in memory.
func TestModernListen(t *testing.T) { fixture.RunModernListen(t, connectModern) }

// TestProtocolConfig: protocol.modern defaults to on, and decides whether
// a session's server offers 2026-07-28; an unknown key under protocol is
// refused.
func TestProtocolConfig(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		modern  bool
		wantErr bool
	}{
		{"", true, false},
		{"protocol:\n  modern: true\n", true, false},
		{"protocol:\n  modern: false\n", false, false},
		{"protocol:\n  moden: true\n", false, true},
	} {
		cfg, err := config.Parse("hub.yaml", []byte("servers:\n  a:\n    command: x\n"+tc.doc), builtin.Names())
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
