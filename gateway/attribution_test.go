package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestAttributionModernHTTP: over streamable HTTP, where every 2026-07-28
// request stands alone and the requests of one toolset and principal share
// one hub session, what alice's upstream call sends while it waits for her
// input_required answer (an elicitation, log lines) reaches neither bob
// nor another client of alice's own principal calling the same shared
// upstream: the elicitation is refused, the lines dropped, and the other
// client's call gets its own result. Before, the elicitation reached the
// other client as input_required on its unrelated call, and its answer
// became alice's upstream result.
func TestAttributionModernHTTP(t *testing.T) {
	for _, tc := range []struct {
		name         string
		alice, other string // bearer tokens; "" with auth off (anonymous loopback clients: one principal)
	}{
		{"two principals", "alice-token-0123456789abcdef", "bob-token-0123456789abcdef"},
		{"two anonymous clients", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := fixture.NewAskingServer()
			cfg := fixture.NewConfig(config.Discovery{}, fixture.ServerEntry("hostile"))
			on := true
			cfg.Protocol.Modern = &on
			if tc.alice != "" {
				cfg.Auth.Tokens = []config.Token{{Name: "alice", Value: tc.alice}, {Name: "bob", Value: tc.other}}
			}
			log := fixture.NewLog(t)
			g, err := New(fixture.Context(t), cfg, Options{Hub: hub.Options{
				Logger:      slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug})),
				StartupWait: 20 * time.Second,
				Builtin:     func(string, map[string]string) (*mcp.Server, error) { return x.Server(), nil },
			}, OpenStore: openStore})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			srv := httptest.NewServer(g.HTTPHandler(nil))
			t.Cleanup(srv.Close)
			connect := func(token string, client *mcp.Client, opts *mcp.ClientSessionOptions) *mcp.ClientSession {
				t.Helper()
				headers := map[string]string{}
				if token != "" {
					headers["Authorization"] = "Bearer " + token
				}
				cs, err := client.Connect(fixture.Context(t), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
					HTTPClient: &http.Client{Transport: fixture.HeaderTransport(headers)}, MaxRetries: -1}, opts)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { cs.Close() })
				return cs
			}
			// A 2025-11-25 session asks the upstream for every log line.
			setter := connect(tc.alice, mcp.NewClient(&mcp.Implementation{Name: "setter", Version: "0"}, nil), &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err := setter.SetLoggingLevel(fixture.Context(t), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
				t.Fatal(err)
			}

			aliceAsked := make(chan struct{}, 1)
			aliceAnswer := make(chan struct{})
			answer, release := sync.OnceFunc(func() { close(aliceAnswer) }), sync.OnceFunc(func() { close(x.Release) })
			t.Cleanup(answer)
			t.Cleanup(release)
			alice := connect(tc.alice, mcp.NewClient(&mcp.Implementation{Name: "alice", Version: "0"}, &mcp.ClientOptions{
				CreateMessageHandler: func(ctx context.Context, _ *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					aliceAsked <- struct{}{}
					select {
					case <-aliceAnswer:
					case <-ctx.Done():
						return nil, ctx.Err()
					}
					return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "alice-answer"}}, nil
				},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "alice"}}, nil
				},
			}), nil)
			if v := alice.InitializeResult().ProtocolVersion; v != hub.ModernProtocol {
				t.Fatalf("alice negotiated %q, want %s", v, hub.ModernProtocol)
			}
			otherAsked := make(chan string, 4)
			var otherLogs atomic.Int64
			other := connect(tc.other, mcp.NewClient(&mcp.Implementation{Name: "other", Version: "0"}, &mcp.ClientOptions{
				CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					otherAsked <- "sampling"
					return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "other-answer"}}, nil
				},
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					otherAsked <- req.Params.Message
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "other"}}, nil
				},
				LoggingMessageHandler: func(context.Context, *mcp.LoggingMessageRequest) { otherLogs.Add(1) },
			}), nil)

			call := func(cs *mcp.ClientSession, name string, out chan<- string) {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{}, Meta: mcp.Meta{mcp.MetaKeyLogLevel: "debug"}})
				switch {
				case err != nil:
					out <- "call failed: " + err.Error()
				default:
					out <- fixture.ResultText(res)
				}
			}
			aliceDone, otherDone := make(chan string, 1), make(chan string, 1)
			go call(alice, "hostile__ask", aliceDone)
			select {
			case <-aliceAsked: // her call waits for her answer
			case <-time.After(30 * time.Second):
				t.Fatal("alice was never asked to sample")
			}
			go call(other, "hostile__block", otherDone)
			select {
			case <-x.Blocked:
			case <-time.After(30 * time.Second):
				t.Fatal("the other client's call never reached the upstream")
			}
			close(x.Proceed)
			var elicit string
			select {
			case elicit = <-x.Elicited:
			case what := <-otherAsked:
				t.Fatalf("the other client was asked %q, sent by alice's upstream call", what)
			case <-time.After(30 * time.Second):
				t.Fatal("the upstream's elicitation never ended")
			}
			if !strings.Contains(elicit, "cannot route") {
				t.Errorf("the unattributable elicitation ended %q, want a refusal", elicit)
			}
			log.WaitFor(t, "the hub to drop alice's log lines", 30*time.Second, func(s string) bool {
				return strings.Contains(s, "upstream log not forwarded") && strings.Contains(s, "alice-secret-log-2")
			})
			release()
			if got := <-otherDone; got != "released" {
				t.Errorf("the other client's call = %q, want its own result", got)
			}
			if n := otherLogs.Load(); n != 0 {
				t.Errorf("the other client got %d log lines of alice's call", n)
			}
			answer()
			if got := <-aliceDone; !strings.HasPrefix(got, "sample=alice-answer; elicit=error: ") {
				t.Errorf("alice's result = %q", got)
			}
		})
	}
}
