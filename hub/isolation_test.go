package hub

// Isolation: a stdio server with `isolation: principal` or `session` runs
// a real fixture process per principal or per client session (isolation.go,
// upstream/isolated.go).

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// isoHub starts a hub with one stdio fixture server, "iso", in mode.
func isoHub(t *testing.T, mode string, tune func(*config.Server)) *Hub {
	t.Helper()
	sc := fixture.StdioEntry(t, "iso", "-features")
	sc.Isolation = mode
	if tune != nil {
		tune(sc)
	}
	return newTestHub(t, fixture.RestartingConfig(sc), nil)
}

// isoClient is a client session of principal name (a token principal),
// with the options given.
func isoClient(t *testing.T, h *Hub, name string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	if opts == nil {
		opts = &mcp.ClientOptions{}
	}
	opts.Logger = quietLogger
	p := &Principal{ID: "token:" + name, Name: name, Kind: PrincipalToken}
	cs, err := h.Connect(WithPrincipal(context.Background(), p), "", mcp.NewClient(&mcp.Implementation{Name: name, Version: "0"}, opts))
	if err != nil {
		t.Fatalf("connect %s: %v", name, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// isoCall calls tool and returns its text and isError; a protocol error
// fails the test.
func isoCall(t *testing.T, cs *mcp.ClientSession, tool string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(fixture.Context(t), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	return fixture.ResultText(res), res.IsError
}

func isoPID(t *testing.T, cs *mcp.ClientSession) int {
	t.Helper()
	text, isErr := isoCall(t, cs, "iso__pid", nil)
	pid, err := strconv.Atoi(text)
	if isErr || err != nil {
		t.Fatalf("iso__pid: %q", text)
	}
	return pid
}

func isoStatus(t *testing.T, h *Hub) int {
	for _, st := range h.Upstreams() {
		if st.Name == "iso" {
			return st.IsolatedProcesses
		}
	}
	t.Fatal("no server 'iso'")
	return 0
}

// TestIsolationProcesses: under `shared` every client calls the one
// process; under `principal` each principal gets a process of its own,
// which its sessions share; under `session` each session does. The shared
// process goes on serving the catalog.
func TestIsolationProcesses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode                                string
		alicesShared, principalsShared, own bool
	}{
		{config.IsolationShared, true, true, false},
		{config.IsolationPrincipal, true, false, true},
		{config.IsolationSession, false, false, true},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			h := isoHub(t, tc.mode, nil)
			u, err := h.upstream("iso")
			if err != nil {
				t.Fatal(err)
			}
			shared := u.Lists().ServerInfo
			if shared == nil {
				t.Fatal("the shared process did not list the server")
			}
			alice1, alice2, bob := isoClient(t, h, "alice", nil), isoClient(t, h, "alice", nil), isoClient(t, h, "bob", nil)
			a1, a2, b := isoPID(t, alice1), isoPID(t, alice2), isoPID(t, bob)
			if (a1 == a2) != tc.alicesShared {
				t.Errorf("alice's two sessions: processes %d and %d", a1, a2)
			}
			if (a1 == b) != tc.principalsShared {
				t.Errorf("alice and bob: processes %d and %d", a1, b)
			}
			// A resource read goes to the reader's process too.
			for cs, pid := range map[*mcp.ClientSession]int{alice1: a1, bob: b} {
				res, err := cs.ReadResource(fixture.Context(t), &mcp.ReadResourceParams{URI: "fixture://info"})
				if err != nil {
					t.Fatal(err)
				}
				if want := fmt.Sprintf(`"pid":%d`, pid); !strings.Contains(res.Contents[0].Text, want) {
					t.Errorf("fixture://info read %s; want it from the process of the reader's calls, %d", res.Contents[0].Text, pid)
				}
			}
			want := 0
			if tc.own {
				want = 3
				if tc.alicesShared {
					want = 2
				}
			}
			if got := isoStatus(t, h); got != want {
				t.Errorf("isolated processes in the status: %d, want %d", got, want)
			}
		})
	}
}

// TestIsolationSessionEnd: under `session`, a session's process stops
// when the session ends.
func TestIsolationSessionEnd(t *testing.T) {
	t.Parallel()
	h := isoHub(t, config.IsolationSession, nil)
	cs := isoClient(t, h, "alice", nil)
	pid := isoPID(t, cs)
	cs.Close()
	waitFor(t, "the session's process stopped", func() bool { return isoStatus(t, h) == 0 && !running(pid) })
}

// running reports whether process pid (a child of the hub's: exited
// children are reaped at once) is still there.
func running(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return p.Signal(syscall.Signal(0)) == nil
}

// TestIsolationIdleStop: an isolated process that serves nothing for
// isolation_idle_timeout stops; the next call starts another.
func TestIsolationIdleStop(t *testing.T) {
	t.Parallel()
	h := isoHub(t, config.IsolationPrincipal, func(sc *config.Server) {
		sc.IsolationIdleTimeout = config.Duration(50 * time.Millisecond)
	})
	cs := isoClient(t, h, "alice", nil)
	pid := isoPID(t, cs)
	waitFor(t, "the idle process stopped", func() bool { return isoStatus(t, h) == 0 && !running(pid) })
	if again := isoPID(t, cs); again == pid {
		t.Errorf("the call after the idle stop went to the stopped process %d", pid)
	}
}

// TestIsolationLimit: past max_isolated_processes, with every process
// busy, a call fails naming the limit and the server; once one is idle, it
// makes room.
func TestIsolationLimit(t *testing.T) {
	t.Parallel()
	h := isoHub(t, config.IsolationPrincipal, func(sc *config.Server) { sc.MaxIsolatedProcesses = 1 })
	asked, answer := make(chan struct{}), make(chan struct{})
	alice := isoClient(t, h, "alice", &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asked)
			<-answer
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "alice"}}, nil
		},
	})
	bob := isoClient(t, h, "bob", nil)
	done := make(chan string)
	go func() {
		text, _ := isoCall(t, alice, "iso__elicit", map[string]any{"message": "name?"})
		done <- text
	}()
	<-asked // alice's process is busy with her call
	text, isErr := isoCall(t, bob, "iso__pid", nil)
	if !isErr || !strings.Contains(text, "max_isolated_processes") || !strings.Contains(text, "'iso'") {
		t.Errorf("bob's call past the limit: isError=%v %q; want an error naming max_isolated_processes and the server", isErr, text)
	}
	close(answer)
	if text := <-done; !strings.Contains(text, "alice") {
		t.Errorf("alice's call: %q", text)
	}
	isoPID(t, bob) // alice's idle process makes room
}

// TestIsolationConcurrentElicitation: under `principal`, alice and bob
// call a tool that elicits at the same time; each gets their own
// question, and each call gets its own answer. A log line alice's process
// sends meanwhile reaches alice alone. Under `shared` the second question
// is refused (several sessions calling one process) and the log dropped.
// Within alice's process the rule of the shared one still holds: two of
// her sessions calling at once get a refusal, not each other's question.
func TestIsolationConcurrentElicitation(t *testing.T) {
	t.Parallel()
	h := isoHub(t, config.IsolationPrincipal, nil)
	var both sync.WaitGroup
	both.Add(2)
	logs := map[string]chan string{"alice": make(chan string, 10), "bob": make(chan string, 10)}
	client := func(name string) *mcp.ClientSession {
		return isoClient(t, h, name, &mcp.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if req.Params.Message != "who is "+name+"?" {
					return nil, fmt.Errorf("%s was asked %q", name, req.Params.Message)
				}
				both.Done()
				both.Wait() // both questions are out before either is answered
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": name}}, nil
			},
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				logs[name] <- fmt.Sprint(req.Params.Data)
			},
		})
	}
	alice, bob := client("alice"), client("bob")
	for _, cs := range []*mcp.ClientSession{alice, bob} {
		if err := cs.SetLoggingLevel(fixture.Context(t), &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			t.Fatal(err)
		}
	}
	results := make(chan string, 2)
	for name, cs := range map[string]*mcp.ClientSession{"alice": alice, "bob": bob} {
		go func() {
			text, isErr := isoCall(t, cs, "iso__elicit", map[string]any{"message": "who is " + name + "?"})
			results <- fmt.Sprintf("%s: isError=%v %s", name, isErr, text)
		}()
	}
	for range 2 {
		r := <-results
		name, _, _ := strings.Cut(r, ":")
		if want := fmt.Sprintf(`isError=false action=accept content={"answer":"%s"}`, name); !strings.HasSuffix(r, want) {
			t.Errorf("%s\nwant it to end with %s", r, want)
		}
	}
	// With a call of bob's in flight (waiting for his answer), alice's
	// process logs during hers.
	asked, release := make(chan struct{}), make(chan struct{})
	bob2 := isoClient(t, h, "bob", &mcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, _ *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			close(asked)
			<-release
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			logs["bob"] <- fmt.Sprint(req.Params.Data)
		},
	})
	held := make(chan string, 1)
	go func() {
		text, _ := isoCall(t, bob2, "iso__elicit", map[string]any{"message": "wait"})
		held <- text
	}()
	<-asked
	if text, isErr := isoCall(t, alice, "iso__log", map[string]any{"message": "alice's secret"}); isErr {
		t.Fatalf("log: %s", text)
	}
	select {
	case got := <-logs["alice"]:
		if got != "alice's secret" {
			t.Errorf("alice got the log line %q", got)
		}
	case <-time.After(10 * time.Second):
		// Notifications reach a go-sdk client's handler on their own,
		// so the line may follow the call's result: wait for it, boundedly.
		t.Error("alice's log line did not reach her")
	}
	close(release)
	<-held
	select {
	case got := <-logs["bob"]:
		t.Errorf("bob got the log line %q", got)
	default:
	}

	// Two sessions of alice calling at once share her process: its
	// question during the second call cannot be told from one for the
	// first, and is refused, never given to the other session.
	firstAsked, firstRelease := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	var seen []string
	aliceSession := func(hold bool) *mcp.ClientSession {
		return isoClient(t, h, "alice", &mcp.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				seen = append(seen, fmt.Sprintf("hold=%v asked %s", hold, req.Params.Message))
				mu.Unlock()
				if hold {
					close(firstAsked)
					<-firstRelease
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "mine"}}, nil
			},
		})
	}
	first, second := aliceSession(true), aliceSession(false)
	firstDone := make(chan string, 1)
	go func() {
		text, _ := isoCall(t, first, "iso__elicit", map[string]any{"message": "first"})
		firstDone <- text
	}()
	<-firstAsked
	text, isErr := isoCall(t, second, "iso__elicit", map[string]any{"message": "second"})
	if !isErr || !strings.Contains(text, "cannot route") {
		t.Errorf("alice's second session, while her first waits: isError=%v %q; want the question refused", isErr, text)
	}
	close(firstRelease)
	if text := <-firstDone; !strings.Contains(text, "action=accept") {
		t.Errorf("alice's first session: %q", text)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[0] != "hold=true asked first" {
		t.Errorf("questions alice's sessions were asked: %q; want only the first session's own", seen)
	}
}

// TestIsolationHubClose: isolated processes end with the hub.
func TestIsolationHubClose(t *testing.T) {
	t.Parallel()
	h := isoHub(t, config.IsolationPrincipal, nil)
	pid := isoPID(t, isoClient(t, h, "alice", nil))
	if n := isoStatus(t, h); n != 1 {
		t.Fatalf("%d isolated processes, want alice's", n)
	}
	h.Close()
	waitFor(t, "the isolated process ended with the hub", func() bool { return !running(pid) })
}
