package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestToolsetBoundsNotesHTTP: the finding as it was reported, over real
// HTTP with the real notes server: a client restricted to toolset basics
// (calc only), by /mcp/basics or by its token's toolset claim, in either
// era, neither lists nor reads note://1 nor gets the notes prompt, and
// each refusal is the answer a name no server has gets; a client of all
// servers reads it.
func TestToolsetBoundsNotesHTTP(t *testing.T) {
	dir := t.TempDir()
	iss := fixture.NewIssuer(t, "", false)
	iss.AddKey("k1", false, true)
	cfg, err := config.Parse(filepath.Join(dir, "hub.yaml"), []byte(`
servers:
  notes:
    builtin: notes
    env: {NOTES_FILE: `+filepath.Join(dir, "notes.json")+`}
  calc:
    builtin: calc
toolsets:
  basics:
    servers: {calc: true}
  all:
    servers: {calc: true, notes: true}
protocol:
  modern: true
`), builtin.Names())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auth.OAuth = &config.OAuth{Issuer: iss.URL, Audience: testAudience, ToolsetClaim: "groups"}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := New(ctx, cfg, Options{Hub: hub.Options{Logger: slog.New(slog.DiscardHandler), StartupWait: 20 * time.Second, Builtin: builtins(cfg, quietLogger)}, OpenStore: openStore})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.HTTPHandler(nil))
	t.Cleanup(func() { srv.Close(); g.Close() })

	connect := func(t *testing.T, path string, groups []string, version string) *mcp.ClientSession {
		t.Helper()
		token := iss.Token("k1", testAudience, jwt.MapClaims{"groups": groups})
		client := mcp.NewClient(&mcp.Implementation{Name: "reach-test", Version: "0"}, nil)
		cs, err := client.Connect(fixture.Context(t), &mcp.StreamableClientTransport{Endpoint: srv.URL + path, MaxRetries: -1, DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: fixture.HeaderTransport(map[string]string{"Authorization": "Bearer " + token})}},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if got := cs.InitializeResult().ProtocolVersion; got != version {
			t.Fatalf("negotiated %s, want %s", got, version)
		}
		return cs
	}
	full := connect(t, "/mcp", []string{"all"}, "2025-11-25")
	if text, isErr := fixture.CallText(t, full, "notes__add_note", map[string]any{"title": "secret", "body": "the launch code"}); isErr {
		t.Fatalf("add_note: %s", text)
	}
	if r, err := full.ReadResource(fixture.Context(t), &mcp.ReadResourceParams{URI: "note://1"}); err != nil || !strings.Contains(r.Contents[0].Text, "launch code") {
		t.Fatalf("a client of every server reads note://1: %v", err)
	}

	shape := func(err error, name string) string {
		var rpc *jsonrpc.Error
		if !errors.As(err, &rpc) {
			return "not a JSON-RPC error: " + fixture.JSON(t, err)
		}
		return fixture.JSON(t, map[string]any{"code": rpc.Code, "message": strings.ReplaceAll(rpc.Message, name, "NAME"), "data": strings.ReplaceAll(string(rpc.Data), name, "NAME")})
	}
	for _, version := range []string{"2025-11-25", hub.ModernProtocol} {
		for _, c := range []struct {
			how, path string
			groups    []string
		}{{"path", "/mcp/basics", []string{"basics", "all"}}, {"claim", "/mcp", []string{"basics"}}} {
			t.Run(c.how+"/"+version, func(t *testing.T) {
				ctx := fixture.Context(t)
				cs := connect(t, c.path, c.groups, version)
				res, err := cs.ListResources(ctx, nil)
				if err != nil || len(res.Resources) != 0 {
					t.Errorf("resources/list = %s, %v; want none", fixture.JSON(t, res), err)
				}
				tres, err := cs.ListResourceTemplates(ctx, nil)
				if err != nil || len(tres.ResourceTemplates) != 0 || (version == hub.ModernProtocol && tres.CacheScope != "private") {
					t.Errorf("resources/templates/list = %s, %v; want none", fixture.JSON(t, tres), err)
				}
				pres, err := cs.ListPrompts(ctx, nil)
				if err != nil || len(pres.Prompts) != 0 {
					t.Errorf("prompts/list = %s, %v; want none", fixture.JSON(t, pres), err)
				}
				r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://1"})
				_, errUnknown := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "nowhere://1"})
				if got, want := shape(err, "note://1"), shape(errUnknown, "nowhere://1"); err == nil || got != want {
					t.Errorf("read note://1 = %s, %s; want the answer to an unknown URI, %s", fixture.JSON(t, r), got, want)
				}
				p, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "notes__summarize_notes"})
				_, errUnknown = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nosuch__prompt"})
				if got, want := shape(err, "notes__summarize_notes"), shape(errUnknown, "nosuch__prompt"); err == nil || got != want {
					t.Errorf("prompts/get notes__summarize_notes = %s, %s; want the answer to an unknown prompt, %s", fixture.JSON(t, p), got, want)
				}
			})
		}
	}
}
