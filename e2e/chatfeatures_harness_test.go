//go:build linux

// Harness of the chat feature tests: a hub.yaml with the bundled built-in
// servers and two providers (OpenAI-type and Anthropic) pointing at one
// scripted local endpoint (internal/fixture.LLM), run through
// `mcp-hub chat -p` in process and through the REPL in a real terminal
// (tmux) with this test binary as mcp-hub.

package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// chatModels are the models of chatConfig, one per wire format.
var chatModels = []string{"gpt", "claude"}

// bundledServers are the servers of the bundled hub.yaml.
const bundledServers = `servers:
  time:
    builtin: time
    defer_loading: false
  calc:
    builtin: calc
    description: Arithmetic expressions, unit conversion and percentages.
  notes:
    builtin: notes
    description: Personal notes kept in a local file.
    env:
      NOTES_FILE: "${MCP_HUB_NOTES_FILE:-}"
  text:
    builtin: text
    description: Text utilities.
`

// chatDiscovery is the bundled hub.yaml's discovery section.
const chatDiscovery = `discovery:
  enabled: true
  defer_all: true
`

// chatSetup is what a test adds to the chat's hub.yaml.
type chatSetup struct {
	// Servers are more entries of the servers section, indented by two.
	Servers string
	// Discovery are more keys of the discovery section, indented by two.
	Discovery string
	// Model is more settings for both models, e.g. ", template: t".
	Model string
	// Extra is appended: more sections (chat:, templates:).
	Extra string
	// Files are written next to hub.yaml.
	Files map[string]string
}

// writeChatConfig writes hub.yaml into a fresh folder: the bundled
// servers and both providers on llm, plus what s adds.
func writeChatConfig(t *testing.T, llm *fixture.LLM, s chatSetup) string {
	t.Helper()
	dir := t.TempDir()
	cfg := bundledServers + s.Servers + chatDiscovery + s.Discovery + fmt.Sprintf(`
providers:
  oa: {type: openai, base_url: %q, api_key: test-key}
  an: {type: anthropic, base_url: %q, api_key: test-key}
models:
  gpt: {provider: oa, model: scripted-gpt%s}
  claude: {provider: an, model: scripted-claude%s}
`, llm.URL+"/v1", llm.URL, s.Model, s.Model) + s.Extra
	for name, content := range s.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "hub.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// chatOneShot runs `mcp-hub --config cfg chat ARGS` and returns stdout,
// stderr and the exit code.
func chatOneShot(t *testing.T, cfg string, args ...string) (string, string, int) {
	t.Helper()
	bin, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, append([]string{"--config", cfg, "chat"}, args...)...)
	cmd.Env = append(os.Environ(), "MCP_HUB_NOTES_FILE="+filepath.Join(t.TempDir(), "notes.json"), "MCP_HUB_STATE_DIR="+t.TempDir())
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	code := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("mcp-hub chat: %v", err)
		}
		code = ee.ExitCode()
	}
	return stdout.String(), stderr.String(), code
}

// lockedBuilder is a strings.Builder safe for concurrent writes.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// term is the REPL running in a tmux pane.
type term struct {
	t    *testing.T
	name string
}

// startREPL starts `mcp-hub --config cfg chat ARGS` in a detached tmux
// session and waits for the REPL's banner.
func startREPL(t *testing.T, cfg string, args ...string) *term {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux not installed")
	}
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("mcphub-chat-%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := []string{"env", envAsMain + "=1", "MCP_HUB_NOTES_FILE=" + filepath.Join(t.TempDir(), "notes.json"),
		"MCP_HUB_STATE_DIR=" + t.TempDir(), self, "--config", cfg, "chat"}
	cmd = append(cmd, args...)
	quoted := make([]string, len(cmd))
	for i, c := range cmd {
		quoted[i] = "'" + strings.ReplaceAll(c, "'", `'\''`) + "'"
	}
	// The pane outlives the REPL so its last words can be read; cat holds
	// it open until the session is killed.
	shell := strings.Join(quoted, " ") + `; echo "[exited $?]"; exec cat`
	tm := &term{t: t, name: name}
	if out, err := tm.tmux("new-session", "-d", "-s", name, "-x", "250", "-y", "80", shell).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	t.Cleanup(func() {
		tm.tmux("kill-server").Run()
		os.Remove(tm.socket())
	})
	tm.waitFor("/help for commands")
	return tm
}

// tmux runs a tmux command on this REPL's own tmux server (a socket of
// its own). Parallel tests sharing the default server raced its exit when
// one killed the last session as another started one.
func (tm *term) tmux(args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-S", tm.socket()}, args...)...)
}

// socket is the tmux server's socket: short, since a socket path is
// limited to about 100 bytes.
func (tm *term) socket() string { return filepath.Join(os.TempDir(), tm.name+".tmux") }

// send types a line and Enter.
func (tm *term) send(line string) {
	tm.t.Helper()
	if out, err := tm.tmux("send-keys", "-t", tm.name, "-l", line).CombinedOutput(); err != nil {
		tm.t.Fatalf("tmux send-keys: %v: %s", err, out)
	}
	if out, err := tm.tmux("send-keys", "-t", tm.name, "Enter").CombinedOutput(); err != nil {
		tm.t.Fatalf("tmux send-keys: %v: %s", err, out)
	}
}

// screen is the pane's whole history, lines joined.
func (tm *term) screen() string {
	out, err := tm.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", tm.name).Output()
	if err != nil {
		tm.t.Fatalf("tmux capture-pane: %v", err)
	}
	return string(out)
}

// waitFor polls the pane until it shows want (the REPL's own output is
// the event waited on) and returns the screen.
func (tm *term) waitFor(want string) string {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := tm.screen()
		if strings.Contains(s, want) {
			return s
		}
		if strings.Contains(s, "[exited ") && !strings.Contains(want, "[exited ") {
			tm.t.Fatalf("the REPL exited before showing %q; screen:\n%s", want, s)
		}
		if time.Now().After(deadline) {
			tm.t.Fatalf("the REPL never showed %q; screen:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitCount polls the pane until it shows want n times.
func (tm *term) waitCount(want string, n int) string {
	tm.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		s := tm.screen()
		if strings.Count(s, want) >= n {
			return s
		}
		if time.Now().After(deadline) || strings.Contains(s, "[exited ") {
			tm.t.Fatalf("the REPL never showed %q %d times; screen:\n%s", want, n, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// quit ends the REPL with /exit and waits for it to exit.
func (tm *term) quit() string {
	tm.t.Helper()
	tm.send("/exit")
	return tm.waitFor("[exited ")
}
