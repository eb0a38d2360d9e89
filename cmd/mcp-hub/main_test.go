package main

import (
	"os"
	"testing"
)

// envAsMain makes the test binary behave as the mcp-hub binary. Tests that
// need a running hub re-execute their own binary with it set, so they exercise
// exactly this package's main() without a separate `go build` of the CLI (and,
// under `go test -race`, the hub runs with the race detector too).
const envAsMain = "MCP_HUB_AS_MAIN"

// testMainCleanups run after all tests; the harness registers the removal of
// binaries it builds once per test process here.
var testMainCleanups []func()

func TestMain(m *testing.M) {
	if os.Getenv(envAsMain) == "1" {
		// The hub starts child processes (stdio upstreams); they must not see
		// the variable in case one of them is a test binary too.
		os.Unsetenv(envAsMain)
		os.Args[0] = "mcp-hub"
		main()
		os.Exit(0)
	}
	code := m.Run()
	for _, f := range testMainCleanups {
		f()
	}
	os.Exit(code)
}
