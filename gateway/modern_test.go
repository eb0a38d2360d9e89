package gateway

import (
	"net/http/httptest"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// connectModern connects a go-sdk client of the 2026-07-28 era to a
// gateway over streamable HTTP, where every request stands alone (the
// hub's tests run the same scenarios over one persistent connection).
func connectModern(t *testing.T, cfg *config.Config, fx *fixture.Servers, client *mcp.Client) *mcp.ClientSession {
	srv := httptest.NewServer(newTestHub(t, cfg, fx).HTTPHandler(nil))
	t.Cleanup(srv.Close)
	cs, err := client.Connect(fixture.Context(t), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestModernDiscovery: fixture.CheckModernDiscovery over HTTP.
func TestModernDiscovery(t *testing.T) { fixture.RunModernDiscovery(t, connectModern) }

// TestModernListen: an upstream's tool-list change reaches a modern client
// on its subscriptions/listen stream, over HTTP.
func TestModernListen(t *testing.T) { fixture.RunModernListen(t, connectModern) }
