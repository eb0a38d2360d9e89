// Package e2e tests mcp-hub from the outside, as its users run it: the
// mcp-hub binary (built once per test run from ./cmd/mcp-hub), real
// upstream servers, the MCP conformance suite, real clients (Claude Code,
// Codex), Redis, HAProxy and Chromium. The slow ones skip unless the
// programs they need are installed (./scripts/test.sh installs them) or
// their variable is set (MCP_HUB_LOAD, MCP_HUB_LIMITS, MCP_HUB_SESSIONS).
package e2e

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// envAsMain was how these tests, when they lived in package main, made the
// test binary run as mcp-hub; the binary they run now is mcp-hub itself,
// which ignores it.
const envAsMain = "MCP_HUB_AS_MAIN"

// envAsBrowser makes the test binary a browser whose user consents at
// once: run with a URL as its one argument, it GETs it and exits.
const envAsBrowser = "MCP_HUB_TEST_BROWSER"

// exitConfig is mcp-hub's exit code for a bad config file or arguments.
const exitConfig = 2

// testMainCleanups run after all tests; the harness registers the removal of
// what it built there.
var testMainCleanups []func()

func TestMain(m *testing.M) {
	if os.Getenv(envAsBrowser) == "1" && len(os.Args) == 2 {
		resp, err := http.Get(os.Args[1])
		if err != nil {
			os.Exit(1)
		}
		resp.Body.Close()
		os.Exit(0)
	}
	fixture.RunWithStateDir(m, func() {
		for _, f := range testMainCleanups {
			f()
		}
	})
}

var hubBuild struct {
	once sync.Once
	path string
	err  error
}

// hubBinary returns the path of the mcp-hub binary under test, built once
// per test process from this module's ./cmd/mcp-hub (with -race when the
// tests are, so that go build reuses what go test compiled).
func hubBinary() (string, error) {
	hubBuild.once.Do(func() {
		dir, err := os.MkdirTemp("", "mcp-hub-e2e-bin-")
		if err != nil {
			hubBuild.err = err
			return
		}
		testMainCleanups = append(testMainCleanups, func() { os.RemoveAll(dir) })
		hubBuild.path = filepath.Join(dir, "mcp-hub")
		args := []string{"build", "-o", hubBuild.path}
		if raceEnabled() {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "github.com/mcp-hub/mcp-hub/cmd/mcp-hub")...)
		if out, err := cmd.CombinedOutput(); err != nil {
			hubBuild.err = fmt.Errorf("go build ./cmd/mcp-hub: %v\n%s", err, strings.TrimSpace(string(out)))
		}
	})
	return hubBuild.path, hubBuild.err
}

// testBinary is this test binary, which is a browser when envAsBrowser is
// set (TestMain).
func testBinary() string { return os.Args[0] }

// raceEnabled reports whether this test binary was built with -race. Binaries
// the harness builds follow it, so `go build` reuses the packages `go test`
// already compiled, and benchmarks can warn that -race distorts timings.
var raceEnabled = sync.OnceValue(func() bool {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-race" {
				return s.Value == "true"
			}
		}
	}
	return false
})
