package upstream

import (
	"errors"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func ownedCount(u *Upstream) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.owned)
}

// rootsOf calls the fixture's roots tool as owner: the server asks the
// client for its roots, and the test listener answers file:///<owner>.
func rootsOf(t *testing.T, u *Upstream, owner any) string {
	t.Helper()
	res, err := u.CallTool(ctxT(t), owner, &mcp.CallToolParams{Name: "roots"})
	if err != nil {
		t.Fatalf("roots as %v: %v", owner, err)
	}
	return fixture.Result(t, res).Content[0].(*mcp.TextContent).Text
}

// TestOwnedSessions: an HTTP upstream runs each downstream session's calls
// in a session of its own, so what the server sends in one is that
// session's alone; the session goes when its owner does. A stdio server is
// shared.
func TestOwnedSessions(t *testing.T) {
	web, _, _ := start(t, config.Upstream{Name: "web", URL: fixture.StartHTTP(t, "-features")}, Options{})
	waitReady(t, web)
	for _, owner := range []any{"alice", "bob", "alice"} {
		if got, want := rootsOf(t, web, owner), "file:///"+owner.(string); got != want {
			t.Errorf("roots as %v = %q, want %q", owner, got, want)
		}
	}
	if got := rootsOf(t, web, nil); got != "file:///listener" {
		t.Errorf("roots without an owner = %q, want the shared session's", got)
	}
	if n := ownedCount(web); n != 2 {
		t.Errorf("%d owned sessions, want 2 (alice, bob)", n)
	}
	web.Forget("alice")
	if n := ownedCount(web); n != 1 {
		t.Errorf("%d owned sessions after alice left, want 1", n)
	}
	if got := rootsOf(t, web, "alice"); got != "file:///alice" {
		t.Errorf("alice back: roots = %q", got)
	}

	stdio, _, _ := start(t, config.Upstream{Name: "proc", Command: fixture.Build(t), Args: []string{"-features"}}, Options{})
	waitReady(t, stdio)
	if got := rootsOf(t, stdio, "alice"); got != "file:///listener" || ownedCount(stdio) != 0 {
		t.Errorf("stdio: roots as alice = %q with %d owned sessions; want the shared session", got, ownedCount(stdio))
	}
}

// TestOwnedSessionRetry: a client whose own session could not be opened
// uses the shared one, and gets its own again once retryOwnedAfter passed.
func TestOwnedSessionRetry(t *testing.T) {
	web, _, _ := start(t, config.Upstream{Name: "web", URL: fixture.StartHTTP(t, "-features")}, Options{})
	waitReady(t, web)
	failedAt := func(ago time.Duration) {
		o := &ownedSession{ready: make(chan struct{}), err: errors.New("refused"), failed: time.Now().Add(-ago)}
		close(o.ready)
		web.mu.Lock()
		web.owned = map[any]*ownedSession{"alice": o}
		web.mu.Unlock()
	}
	failedAt(time.Second)
	if got := rootsOf(t, web, "alice"); got != "file:///listener" {
		t.Errorf("just after a failure: roots as alice = %q, want the shared session's", got)
	}
	failedAt(retryOwnedAfter + time.Second)
	if got := rootsOf(t, web, "alice"); got != "file:///alice" {
		t.Errorf("after retryOwnedAfter: roots as alice = %q, want alice's own session", got)
	}
}
