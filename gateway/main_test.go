package gateway

import (
	"fmt"
	"os"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

// TestMain keeps the hash keys the tests' hubs generate (hashkey.go) in a
// folder of their own, not in the user's state folder.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcp-hub-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(tokenstore.EnvStateDir, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
