//go:build linux

// End-to-end tests of the sandbox (issue 36, item 3): a hostile stdio server
// (testdata/hostile) run by the real hub in a real bubblewrap sandbox tries
// what a malicious server would; every attempt is made through the hub, as a
// client's tool call, and every refusal is asserted.

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// needBwrap skips a test where bubblewrap is not installed, unless
// MCP_HUB_REQUIRE_REAL=1 (./scripts/test.sh installs it), which fails it.
func needBwrap(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		if os.Getenv(envRequireReal) == "1" {
			t.Fatalf("bwrap is not installed and %s=1: apt-get install bubblewrap", envRequireReal)
		}
		t.Skip("bwrap is not installed (apt-get install bubblewrap; ./scripts/test.sh does)")
	}
}

// sandboxHub runs the hub (this test binary as mcp-hub) on cfg with HOME and
// the state folder of the test's own and extra environment, and returns a
// session once tool is listed.
func sandboxHub(t *testing.T, cfgPath, home, state, tool string, env ...string) (*mcp.ClientSession, *child) {
	t.Helper()
	addr := freeAddr(t)
	env = append([]string{envAsMain + "=1", "HOME=" + home, "MCP_HUB_STATE_DIR=" + state}, env...)
	c := startChild(t, "hub", env, mustExecutable(t), "--config", cfgPath, "serve", "--http", addr)
	ctx, cancel := context.WithTimeout(context.Background(), hubReadyTimeout)
	defer cancel()
	var last error
	for {
		if c.exited() {
			t.Fatalf("hub exited (%v):\n%s", c.waitErr, c.logTail(40))
		}
		cs, err := connectListing(ctx, "http://"+addr+"/mcp", tool)
		if err == nil {
			t.Cleanup(func() { cs.Close() })
			return cs, c
		}
		last = err
		select {
		case <-ctx.Done():
			t.Fatalf("hub never listed %s: %v\nhub log:\n%s", tool, last, c.logTail(40))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func mustExecutable(t *testing.T) string {
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	return self
}

// connectListing opens a session and returns it if its tools/list has tool.
func connectListing(ctx context.Context, url, tool string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "sandbox-test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1, DisableStandaloneSSE: true}, fixture.Legacy())
	if err != nil {
		return nil, err
	}
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			break
		}
		if tl.Name == tool {
			return cs, nil
		}
	}
	cs.Close()
	return nil, fmt.Errorf("%s not listed yet", tool)
}

// call calls a tool of the hostile server and returns its text.
func call(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "hostile__" + tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: %v", tool, args, err)
	}
	var out []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// httpServer serves body on 127.0.0.1 and returns its port.
func httpServer(t *testing.T, body string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// TestSandboxHostileServer: a sandboxed server cannot read the user's SSH
// key, the hub's config, token store or audit log (even inside a folder it
// was given), write outside its folder, reach a loopback port it was not
// given (raw TCP, HTTP directly, HTTP through the proxy, including a second
// port of its allowed host) or read the hub's environment; its allowed
// host:port and folder work.
func TestSandboxHostileServer(t *testing.T) {
	needBwrap(t)
	hostile := testdataProgram(t, "hostile")
	root := t.TempDir()
	home := filepath.Join(root, "home")
	state := filepath.Join(root, "state")
	data := filepath.Join(root, "data") // given read-only; the hub's config and audit log live here too
	out := filepath.Join(root, "out")   // given read-write
	for _, d := range []string{filepath.Join(home, ".ssh"), filepath.Join(state, "tokens"), data, out} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	plant := func(path, content string) string {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	sshKey := plant(filepath.Join(home, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY----- planted")
	os.MkdirAll(filepath.Join(home, ".aws"), 0o700)
	awsKeys := plant(filepath.Join(home, ".aws", "credentials"), "aws_secret_access_key = planted")
	// A link in its own folder to the key: followed inside the sandbox,
	// where the key is not.
	if err := os.Symlink(sshKey, filepath.Join(out, "key-link")); err != nil {
		t.Fatal(err)
	}
	tokens := plant(filepath.Join(state, "tokens", "server.json"), `{"access_token":"planted-token"}`)
	shared := plant(filepath.Join(data, "notes.txt"), "notes the server may read")
	audit := filepath.Join(data, "audit.log")
	allowed := httpServer(t, "allowed answer")
	other := httpServer(t, "a port it was not given")

	cfgPath := filepath.Join(data, "hub.yaml")
	plant(cfgPath, fmt.Sprintf(`audit:
  file: %s
servers:
  hostile:
    command: %s
    sandbox:
      network: ["127.0.0.1:%d"]
      read: [%s]
      write: [%s]
`, strconv.Quote(audit), strconv.Quote(hostile), allowed, strconv.Quote(data), strconv.Quote(out)))
	const secret = "hub-environment-secret-36"
	cs, hub := sandboxHub(t, cfgPath, home, state, "hostile__whoami", "MCP_HUB_SANDBOX_TEST_SECRET="+secret)
	t.Logf("whoami: %s", call(t, cs, "whoami", nil))
	if _, err := os.Stat(audit); err != nil {
		t.Fatalf("the audit log should exist by now (a tools/list was audited): %v", err)
	}

	refused := func(what, tool string, args map[string]any, leak string) {
		t.Helper()
		got := call(t, cs, tool, args)
		if !strings.HasPrefix(got, "DENIED") || (leak != "" && strings.Contains(got, leak)) {
			t.Errorf("%s: the sandbox let it through: %s %v answered %q", what, tool, args, got)
		} else {
			t.Logf("%s: refused (%s)", what, got)
		}
	}
	allowedTo := func(what, tool string, args map[string]any, want string) {
		t.Helper()
		if got := call(t, cs, tool, args); !strings.HasPrefix(got, "OK") || !strings.Contains(got, want) {
			t.Errorf("%s: should work: %s %v answered %q, want OK with %q", what, tool, args, got, want)
		}
	}

	refused("the user's SSH key", "read_file", map[string]any{"path": sshKey}, "planted")
	refused("the user's cloud keys", "read_file", map[string]any{"path": awsKeys}, "planted")
	refused("the SSH key through a symlink in its write folder", "read_file", map[string]any{"path": filepath.Join(out, "key-link")}, "planted")
	refused("the hub's config file", "read_file", map[string]any{"path": cfgPath}, "servers")
	refused("the hub's token store", "read_file", map[string]any{"path": tokens}, "planted-token")
	refused("the hub's audit log", "read_file", map[string]any{"path": audit}, "")
	refused("the hub's state folder", "read_file", map[string]any{"path": filepath.Join(state, "tokens")}, "")
	refused("the system's password hashes", "read_file", map[string]any{"path": "/etc/shadow"}, "root:")
	allowedTo("a file in its read folder", "read_file", map[string]any{"path": shared}, "notes the server may read")

	refused("writing into its read-only folder", "write_file", map[string]any{"path": filepath.Join(data, "evil"), "content": "x"}, "")
	refused("writing next to the folders it was given", "write_file", map[string]any{"path": filepath.Join(root, "evil"), "content": "x"}, "")
	refused("writing a key into the user's ~/.ssh", "write_file", map[string]any{"path": filepath.Join(home, ".ssh", "authorized_keys"), "content": "x"}, "")
	// Elsewhere a write lands in the sandbox's own home or tmp, never on
	// the host.
	for _, p := range []string{filepath.Join(data, "evil"), filepath.Join(root, "evil"), filepath.Join(home, "evil"), filepath.Join(home, ".ssh", "authorized_keys")} {
		call(t, cs, "write_file", map[string]any{"path": p, "content": "x"})
		if _, err := os.Stat(p); err == nil {
			t.Errorf("the server wrote %s on the host", p)
		}
	}
	allowedTo("writing into its write folder", "write_file", map[string]any{"path": filepath.Join(out, "result.txt"), "content": "done"}, "wrote")
	if b, err := os.ReadFile(filepath.Join(out, "result.txt")); err != nil || string(b) != "done" {
		t.Errorf("the allowed write did not reach the host: %q, %v", b, err)
	}

	allowedURL := fmt.Sprintf("http://127.0.0.1:%d/", allowed)
	otherURL := fmt.Sprintf("http://127.0.0.1:%d/", other)
	allowedTo("its allowed host:port through the hub's proxy", "http_get", map[string]any{"url": allowedURL, "proxy": true}, "allowed answer")
	refused("another port of its allowed host, through the proxy", "http_get", map[string]any{"url": otherURL, "proxy": true}, "not given")
	refused("the same port by another name, through the proxy", "http_get", map[string]any{"url": fmt.Sprintf("http://localhost:%d/", allowed), "proxy": true}, "allowed answer")
	refused("a tunnel (CONNECT) to another port", "http_get", map[string]any{"url": fmt.Sprintf("https://127.0.0.1:%d/", other), "proxy": true}, "")
	refused("its allowed port directly, without the proxy", "http_get", map[string]any{"url": allowedURL}, "allowed answer")
	refused("another port directly", "http_get", map[string]any{"url": otherURL}, "not given")
	refused("raw TCP to its allowed port", "tcp", map[string]any{"addr": fmt.Sprintf("127.0.0.1:%d", allowed)}, "")
	refused("raw TCP to another port", "tcp", map[string]any{"addr": fmt.Sprintf("127.0.0.1:%d", other)}, "")
	refused("the hub's environment", "env", map[string]any{"name": "MCP_HUB_SANDBOX_TEST_SECRET", "needle": secret}, secret)

	if t.Failed() {
		t.Logf("hub log:\n%s", hub.logTail(40))
	}
}

// TestSandboxFailsClosed: a server that asks for a sandbox where bubblewrap
// cannot be found does not start, and its error says what to install; a
// server with `sandbox: false` next to it runs; `mcp-hub servers` shows
// each one's sandbox.
func TestSandboxFailsClosed(t *testing.T) {
	hostile := testdataProgram(t, "hostile")
	root := t.TempDir()
	cfgPath := filepath.Join(root, "hub.yaml")
	cfg := fmt.Sprintf("sandbox_default: true\nservers:\n  boxed:\n    command: %s\n  open:\n    command: %s\n    sandbox: false\n",
		strconv.Quote(hostile), strconv.Quote(hostile))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(mustExecutable(t), "--config", cfgPath, "servers", "--json")
	// No bwrap on this PATH (the servers' commands are absolute).
	cmd.Env = append(os.Environ(), envAsMain+"=1", "PATH="+root, "MCP_HUB_STATE_DIR="+filepath.Join(root, "state"))
	outb, err := cmd.Output()
	if err != nil {
		t.Logf("mcp-hub servers: %v", err) // a degraded hub may exit non-zero; the JSON says why
	}
	var health struct {
		Servers []struct {
			Name, State, Sandbox string
			LastError            string `json:"last_error"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(outb, &health); err != nil {
		t.Fatalf("mcp-hub servers --json: %v\n%s", err, outb)
	}
	seen := 0
	for _, s := range health.Servers {
		switch s.Name {
		case "boxed":
			seen++
			if s.State == "ready" || !strings.Contains(s.LastError, "apt-get install bubblewrap") {
				t.Errorf("boxed: state %s, error %q: want it not started, with an error naming apt-get install bubblewrap", s.State, s.LastError)
			}
			if !strings.HasPrefix(s.Sandbox, "on") {
				t.Errorf("boxed: sandbox %q, want on (from sandbox_default)", s.Sandbox)
			}
		case "open":
			seen++
			if s.State != "ready" || s.Sandbox != "off" {
				t.Errorf("open: state %s, sandbox %q: want ready and off", s.State, s.Sandbox)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("mcp-hub servers --json lists %d of the 2 servers:\n%s", seen, outb)
	}
}

// TestSandboxFilesystemServer: a real npm server, @modelcontextprotocol/
// server-filesystem (installed into .cache/npm-fs by ./scripts/test.sh),
// works in the sandbox with the entry docs/security.md gives for a
// filesystem server on one folder: it reads and writes there, through the
// hub.
func TestSandboxFilesystemServer(t *testing.T) {
	node, script := os.Getenv(envNode), os.Getenv("MCP_HUB_FS_SERVER")
	if node == "" || script == "" {
		t.Skipf("%s and MCP_HUB_FS_SERVER are not set: run ./scripts/test.sh, which installs Node and server-filesystem into .cache/", envNode)
	}
	needBwrap(t)
	root := t.TempDir()
	home, state, notes := filepath.Join(root, "home"), filepath.Join(root, "state"), filepath.Join(root, "notes")
	for _, d := range []string{home, state, notes} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(notes, "todo.txt"), []byte("buy milk"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(root, "hub.yaml")
	cfg := fmt.Sprintf(`servers:
  notes:
    command: %s
    args: [%s, %s]
    sandbox:
      write: [%s]
`, strconv.Quote(node), strconv.Quote(script), strconv.Quote(notes), strconv.Quote(notes))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, hub := sandboxHub(t, cfgPath, home, state, "notes__read_text_file")
	text := func(tool string, args map[string]any) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__" + tool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v\nhub log:\n%s", tool, err, res, hub.logTail(30))
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := text("read_text_file", map[string]any{"path": filepath.Join(notes, "todo.txt")}); !strings.Contains(got, "buy milk") {
		t.Errorf("read_text_file: %q", got)
	}
	text("write_file", map[string]any{"path": filepath.Join(notes, "done.txt"), "content": "milk bought"})
	if b, err := os.ReadFile(filepath.Join(notes, "done.txt")); err != nil || string(b) != "milk bought" {
		t.Errorf("write_file did not reach the folder: %q %v", b, err)
	}
}
