package upstream

import (
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// isoSession is a downstream session as the hub's is to an isolated
// server: a session id and its principal.
type isoSession struct{ id, principal string }

func (s *isoSession) IsolationKey(mode string) any {
	if mode == config.IsolationSession {
		return s.id
	}
	return PrincipalOwner(s.principal)
}

// TestIsolatedProcesses: a stdio server with `isolation: principal` runs
// each principal's calls in a process of its own, so what the server sends
// there is that principal's; a request that cannot say whose process it
// needs is refused, never sent to the shared process. `session` keys the
// processes by session instead.
func TestIsolatedProcesses(t *testing.T) {
	a1, a2, b := &isoSession{"s1", "alice"}, &isoSession{"s2", "alice"}, &isoSession{"s3", "bob"}
	u, _, _ := start(t, config.Upstream{Name: "proc", Command: fixture.Build(t), Args: []string{"-features"}, Isolation: config.IsolationPrincipal}, Options{})
	waitReady(t, u)
	for _, c := range []struct {
		owner *isoSession
		want  string
	}{{a1, "file:///principal-alice"}, {a2, "file:///principal-alice"}, {b, "file:///principal-bob"}} {
		if got := rootsOf(t, u, c.owner); got != c.want {
			t.Errorf("roots as %v = %q, want %q", c.owner, got, c.want)
		}
	}
	if n := u.IsolatedProcesses(); n != 2 {
		t.Errorf("%d isolated processes, want 2 (alice, bob)", n)
	}
	for _, owner := range []any{nil, "not a session"} {
		_, err := u.CallTool(ctxT(t), owner, &mcp.CallToolParams{Name: "roots"})
		if err == nil || !strings.Contains(err.Error(), "isolation") {
			t.Errorf("a call as %v: %v; want it refused, naming the isolation", owner, err)
		}
	}

	perSession, _, _ := start(t, config.Upstream{Name: "proc", Command: fixture.Build(t), Args: []string{"-features"}, Isolation: config.IsolationSession}, Options{})
	waitReady(t, perSession)
	for _, s := range []*isoSession{a1, a2} {
		if got := rootsOf(t, perSession, s); got != "file:///"+s.id {
			t.Errorf("session: roots as %v = %q", s, got)
		}
	}
	perSession.Forget(a1.id)
	if n := perSession.IsolatedProcesses(); n != 1 {
		t.Errorf("%d isolated processes after s1 ended, want 1", n)
	}
}
