package main

import (
	"os"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
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
	fixture.RunWithStateDir(m, func() {
		for _, f := range testMainCleanups {
			f()
		}
	})
}

func TestNextProcs(t *testing.T) {
	tests := []struct {
		p, most      int
		busy, queued float64
		want         int
	}{
		{1, 2, 0.05, 0, 1},   // idle
		{1, 2, 0.6, 0.01, 1}, // busy, one P keeps up
		{1, 2, 0.95, 0, 2},   // saturated: take the second CPU
		{1, 2, 0.7, 0.2, 2},  // goroutines queue for the one P
		{2, 2, 1.9, 0.3, 2},  // saturated at the most
		{2, 2, 1.2, 0, 2},    // one P would be near its limit
		{2, 2, 0.3, 0, 1},    // the load went
		{2, 2, 0.3, 0.02, 2}, // light, but still queueing
		{4, 8, 3.5, 0, 5},    // saturated
		{4, 8, 1.0, 0, 3},    // three do with room
		{1, 1, 0.99, 0.5, 1}, // one CPU in all
	}
	for _, tc := range tests {
		if got := nextProcs(tc.p, tc.most, tc.busy, tc.queued); got != tc.want {
			t.Errorf("nextProcs(%d, %d, %.2f, %.2f) = %d, want %d", tc.p, tc.most, tc.busy, tc.queued, got, tc.want)
		}
	}
}

func TestParseMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"536870912\n", 536870912, true},
		{"max\n", 0, false},
		{"9223372036854771712\n", 0, false}, // cgroup v1's "no limit"
		{"0\n", 0, false},
		{"", 0, false},
		{"-1", 0, false},
	} {
		got, ok := parseMemoryLimit(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseMemoryLimit(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// runMain runs mcp-hub (this test binary, as main) with args: its combined
// output and exit code (fixture.Run).
func runMain(t *testing.T, env []string, args ...string) (string, int) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fixture.Run(t, self, append(env, envAsMain+"=1"), args...)
}
