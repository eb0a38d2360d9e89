package dashboard

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/pin"
)

// The page lists the tools held back by their pins, with state and reason,
// hidden characters escaped and never the new text.
func TestPageHeldTools(t *testing.T) {
	fx := fixture.NewServers()
	fx.Define("notes", fixture.Tool{Name: "add_note", Description: "Add a note. SECRET-NEW-TEXT \U000E0049\u202E", Schema: `{"type":"object"}`},
		fixture.Tool{Name: "list_notes", Description: "List notes.", Schema: `{"type":"object"}`})
	cfg := fixture.NewConfig(config.Discovery{}, fixture.ServerEntry("notes"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stateDir := t.TempDir()
	g, err := gateway.New(ctx, cfg, gateway.Options{Hub: hub.Options{Logger: slog.New(slog.DiscardHandler), Builtin: fx.Builtin, StateDir: stateDir}, StateDir: stateDir})
	if err != nil {
		t.Fatal(err)
	}
	ui := New(g)
	srv := httptest.NewServer(g.HTTPHandler(map[string]http.Handler{gateway.UIPath: ui, gateway.UIPath + "/": ui}))
	t.Cleanup(func() {
		srv.Close()
		g.Close()
	})
	_, body := do(t, "GET", srv.URL+"/ui", nil, nil)
	if !strings.Contains(body, `<tr class="held" data-tool="notes__add_note">`) || !strings.Contains(body, "hidden characters") {
		t.Fatalf("the page does not list the held tool:\n%s", body)
	}
	if strings.Contains(body, "SECRET-NEW-TEXT") || pin.HasHidden(body) {
		t.Error("the page shows the held tool's text")
	}
}
