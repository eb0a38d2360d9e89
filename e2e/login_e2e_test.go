//go:build linux

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestLoginRefusesNonWebURLs runs `mcp-hub login` against an authorization
// server whose authorization_endpoint is not a web address, with $BROWSER
// a script that records what it is asked to open: the login fails naming
// the reason and the script never runs.
func TestLoginRefusesNonWebURLs(t *testing.T) {
	t.Parallel()
	for _, endpoint := range []string{"file:///etc/passwd", "smb://127.0.0.1/share/payload.exe", "ms-msdt:-id PCWDiagnostic", "https://login.example@127.0.0.1:1/authorize"} {
		t.Run(endpoint, func(t *testing.T) {
			t.Parallel()
			as := fixture.NewAuthServer(t, time.Hour, "mcp:read")
			as.SetAuthorizationEndpoint(endpoint)
			ps := fixture.NewProtectedServer(t, as, "mcp:read")
			dir := t.TempDir()
			record := filepath.Join(dir, "opened")
			browser := filepath.Join(dir, "browser.sh")
			if err := os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s\\n' \"$1\" >> '"+record+"'\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			cfg := writeConfig(t, fmt.Sprintf("servers:\n  svc:\n    url: %q\n", ps.URL))
			out, code := runMain(t, []string{"MCP_HUB_STATE_DIR=" + filepath.Join(dir, "state"), "BROWSER=" + browser},
				"--config", cfg, "login", "--timeout", "20s", "svc")
			if code != 1 || !strings.Contains(out, "login to 'svc' failed") ||
				!strings.Contains(out, "refusing to open") && !strings.Contains(out, "authorization_endpoint") {
				t.Errorf("login (exit %d):\n%s\nwant exit 1 saying why the URL is refused", code, out)
			}
			if opened, err := os.ReadFile(record); err == nil {
				t.Errorf("$BROWSER was run with %q", opened)
			}
			if strings.Contains(out, "If none opens, visit") {
				t.Errorf("the refused URL was offered to the user:\n%s", out)
			}
		})
	}
}

// TestLoginDeniedPrintsCleanLine: the authorization server refuses with an
// error_description of terminal escapes and 10 KB; login prints one
// bounded line without control characters.
func TestLoginDeniedPrintsCleanLine(t *testing.T) {
	t.Parallel()
	as := fixture.NewAuthServer(t, time.Hour, "mcp:read")
	as.SetDenyDescription("\x1b[2J\x1b]0;owned\x07" + strings.Repeat("x", 10<<10))
	ps := fixture.NewProtectedServer(t, as, "mcp:read")
	cfg := writeConfig(t, fmt.Sprintf("servers:\n  svc:\n    url: %q\n", ps.URL))
	out, code := runMain(t, []string{"MCP_HUB_STATE_DIR=" + filepath.Join(t.TempDir(), "state"), "BROWSER=" + testBinary(), envAsBrowser + "=1"},
		"--config", cfg, "login", "--timeout", "20s", "svc")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "access_denied") {
			line = l
		}
	}
	if code != 1 || line == "" {
		t.Fatalf("login (exit %d):\n%.2000q\nwant exit 1 naming access_denied", code, out)
	}
	if strings.ContainsAny(out, "\x1b\x07") || len(line) > 1100 || !strings.Contains(line, "[cut:") {
		t.Errorf("denied line (%d bytes) %.200q: want it bounded, cut and without control characters", len(line), line)
	}
}

// recordingBrowser writes a $BROWSER script that appends the URL it is
// asked to open to a file, then, when follow is set, follows it as the
// test binary's consenting browser does (envAsBrowser). opens reads how
// many times it ran.
func recordingBrowser(t *testing.T, follow bool) (browser string, opens func() int) {
	t.Helper()
	dir := t.TempDir()
	record := filepath.Join(dir, "opened")
	script := "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '" + record + "'\n"
	if follow {
		script += "exec '" + testBinary() + "' \"$1\"\n"
	}
	browser = filepath.Join(dir, "browser.sh")
	if err := os.WriteFile(browser, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return browser, func() int {
		b, _ := os.ReadFile(record)
		return strings.Count(string(b), "\n")
	}
}

// TestLoginErrorRedirectEndsIt: the authorization server redirects back
// with an error (the right state): login ends there, exit 1, with the
// server's error and error_description on the terminal, after one
// registration and one browser.
func TestLoginErrorRedirectEndsIt(t *testing.T) {
	t.Parallel()
	as := fixture.NewAuthServer(t, time.Hour, "mcp:read")
	as.SetDenyDescription("the user said no")
	ps := fixture.NewProtectedServer(t, as, "mcp:read")
	browser, opens := recordingBrowser(t, true)
	cfg := writeConfig(t, fmt.Sprintf("servers:\n  svc:\n    url: %q\n", ps.URL))
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, self, "--config", cfg, "login", "--timeout", "20s", "svc")
	cmd.Env = append(os.Environ(), "MCP_HUB_STATE_DIR="+filepath.Join(t.TempDir(), "state"), "BROWSER="+browser, envAsBrowser+"=1", envAsMain+"=1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("login: %v", err)
	}
	if code != 1 || !strings.Contains(stderr.String(), "access_denied") || !strings.Contains(stderr.String(), "the user said no") {
		t.Errorf("login (exit %d): stderr:\n%s\nwant exit 1 with the server's error and error_description on stderr", code, stderr.String())
	}
	if n := as.Counters().Registrations; n != 1 {
		t.Errorf("the authorization server saw %d registrations, want 1", n)
	}
	if n := opens(); n != 1 {
		t.Errorf("the browser was opened %d times, want 1", n)
	}
}

// TestLoginTimeoutEndsIt: nobody completes the login in the browser:
// login ends with exit 1 after about one --timeout, after one
// registration and one browser.
func TestLoginTimeoutEndsIt(t *testing.T) {
	t.Parallel()
	const timeout = 4 * time.Second
	as := fixture.NewAuthServer(t, time.Hour, "mcp:read")
	ps := fixture.NewProtectedServer(t, as, "mcp:read")
	browser, opens := recordingBrowser(t, false)
	cfg := writeConfig(t, fmt.Sprintf("servers:\n  svc:\n    url: %q\n", ps.URL))
	start := time.Now()
	out, code := runMain(t, []string{"MCP_HUB_STATE_DIR=" + filepath.Join(t.TempDir(), "state"), "BROWSER=" + browser},
		"--config", cfg, "login", "--timeout", timeout.String(), "svc")
	elapsed := time.Since(start)
	if code != 1 || !strings.Contains(out, "login to 'svc' failed") {
		t.Errorf("login (exit %d):\n%s\nwant exit 1", code, out)
	}
	// One timeout plus start-up on a loaded machine, never two.
	if elapsed < timeout || elapsed > 2*timeout-time.Second {
		t.Errorf("login ended after %s, want about one --timeout (%s)", elapsed.Round(time.Millisecond), timeout)
	}
	if n := as.Counters().Registrations; n != 1 {
		t.Errorf("the authorization server saw %d registrations, want 1", n)
	}
	if n := opens(); n != 1 {
		t.Errorf("the browser was opened %d times, want 1", n)
	}
}
