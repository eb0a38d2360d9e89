package chatloop

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
)

// syncBuffer is a bytes.Buffer safe to read while the REPL writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func newREPLChat(t *testing.T, h *testHub, p *scripted) *Chat {
	t.Helper()
	chat, err := testConfig(p).NewChat(h.dial(t), ChatOptions{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	return chat
}

// TestREPLMultiTurn is acceptance 2: a tool loaded by a search in turn 1
// is offered and used in turn 2 without a new search, with the history of
// turn 1 sent along.
func TestREPLMultiTurn(t *testing.T) {
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			h := newTestHub(t)
			p := newScripted(t, kind,
				// turn 1
				reply("", call("c1", "search_tools", `{"query":"weather"}`)),
				reply("", call("c2", "weather__get_forecast", `{"location":"Paris"}`)),
				reply("Sunny in Paris today."),
				// turn 2
				reply("", call("c3", "weather__get_forecast", `{"location":"Rome"}`)),
				reply("Rome is sunny too."),
			)
			chat := newREPLChat(t, h, p)
			var out, errw syncBuffer
			in := strings.NewReader("weather in Paris?\n\nand Rome?\n/stats\n")
			if err := RunREPL(context.Background(), chat, REPLOptions{In: in, Out: &out, Err: &errw}); err != nil {
				t.Fatal(err)
			}
			eq(t, "requests", len(p.requests()), 5)
			eqSlice(t, "turn 2 first request tools", p.toolsOffered(3), withTools("weather__get_forecast"))
			eqResults(t, "turn 2 results", p.toolResults(4), []sentResult{{CallID: "c3", Text: "Sunny in Rome"}})
			// Turn 2 carries turn 1: user, assistant, tool, assistant, tool, assistant, user.
			msgs := p.requests()[3]["messages"].([]any)
			wantLen := 7
			if kind == config.ProviderOpenAI {
				wantLen++ // the system message
			}
			eq(t, "turn 2 history length", len(msgs), wantLen)
			eq(t, "searches upstream", h.callCount("search_tools"), 1)
			eq(t, "forecast upstream", h.callCount("weather__get_forecast"), 2)
			s := chat.Stats()
			eq(t, "searches", s.Searches, 1)
			eq(t, "model calls", s.ModelCalls, 5)

			o := out.String()
			if !strings.Contains(o, "> Sunny in Paris today.\n> ") || !strings.Contains(o, "Rome is sunny too.\n") {
				t.Errorf("out = %q", o)
			}
			e := errw.String()
			for _, want := range []string{"[tool] search_tools", `[tool] weather__get_forecast {"location":"Rome"}`, "model calls: 5", "searches: 1, tools discovered: 1"} {
				if !strings.Contains(e, want) {
					t.Errorf("err output lacks %q:\n%s", want, e)
				}
			}
		})
	}
}

// TestREPLInterrupt: Ctrl-C cancels the running turn, including the tool
// call upstream (MCP cancellation), and the REPL goes on.
func TestREPLInterrupt(t *testing.T) {
	h := newTestHub(t)
	p := newScripted(t, config.ProviderOpenAI,
		reply("", call("c1", "slow__wait", `{}`)),
		reply("still here"),
	)
	chat := newREPLChat(t, h, p)
	inR, inW := io.Pipe()
	sigs := make(chan os.Signal, 1)
	var out, errw syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- RunREPL(context.Background(), chat, REPLOptions{In: inR, Out: &out, Err: &errw, Interrupts: sigs})
	}()

	io.WriteString(inW, "wait for it\n")
	select {
	case <-h.started:
	case <-time.After(30 * time.Second):
		t.Fatal("slow tool never started")
	}
	sigs <- os.Interrupt
	select {
	case <-h.cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the upstream tool call was not cancelled")
	}
	io.WriteString(inW, "are you there?\n")
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("REPL did not finish")
	}
	if !strings.Contains(errw.String(), "(cancelled") {
		t.Errorf("err = %q, want a cancellation notice", errw.String())
	}
	if !strings.Contains(out.String(), "still here") {
		t.Errorf("out = %q, want the second turn's answer", out.String())
	}
	// The cancelled turn was rolled back: turn 2 starts from a clean history.
	msgs := p.requests()[1]["messages"].([]any)
	eq(t, "turn 2 messages (system + user)", len(msgs), 2)
}
