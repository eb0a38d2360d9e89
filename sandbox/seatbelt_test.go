package sandbox

import (
	"strings"
	"testing"
)

// TestSeatbeltProfile checks the macOS profile's text: denied by default,
// the system readable, what the server is given, the hub's files denied
// after it, the server's home and tmp allowed last, and one proxy port.
func TestSeatbeltProfile(t *testing.T) {
	p := &plan{
		home:     "/Users/me/Library/Application Support/mcp-hub/sandbox/fs-1/home",
		readable: []string{"/opt/homebrew/bin/node", `/Users/me/we"ird`},
		writable: []string{"/Users/me/notes"},
		hidden:   []string{"/Users/me/Library/Application Support/mcp-hub", "/Users/me/.config/mcp-hub/hub.yaml"},
	}
	got := seatbeltProfile(p, "/tmp/x", 5123)
	for _, want := range []string{
		"(version 1)\n(deny default)\n",
		`(allow file-read* (subpath "/usr")`,
		`(allow file-read* (subpath "/opt/homebrew/bin/node") (subpath "/Users/me/we\"ird"))`,
		`(allow file-read* file-write* (subpath "/Users/me/notes"))`,
		`(subpath "/Users/me/Library/Application Support/mcp-hub") (subpath "/Users/me/.config/mcp-hub/hub.yaml"))`,
		`(allow network-outbound (remote tcp "localhost:5123"))`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("profile lacks %s\n%s", want, got)
		}
	}
	deny := strings.Index(got, "(deny file-read* file-write*")
	home := strings.Index(got, `(allow file-read* file-write* (subpath "/Users/me/Library/Application Support/mcp-hub/sandbox/fs-1/home")`)
	write := strings.Index(got, `(subpath "/Users/me/notes")`)
	if !(write < deny && deny < home) {
		t.Errorf("order: write %d, deny %d, home %d: the hub's files must be denied after what is given, the home allowed after that\n%s", write, deny, home, got)
	}
	if strings.Contains(seatbeltProfile(p, "/tmp/x", 0), "network") {
		t.Error("a server without network gets a network rule")
	}
	if strings.Contains(got, "(allow network*") || strings.Contains(got, "(allow default") {
		t.Errorf("too wide:\n%s", got)
	}
}
