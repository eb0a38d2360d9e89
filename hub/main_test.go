package hub

import (
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestMain keeps the hash keys the tests' hubs generate (hashkey.go) in a
// folder of their own, not in the user's state folder.
func TestMain(m *testing.M) { fixture.RunWithStateDir(m) }
