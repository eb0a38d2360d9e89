//go:build linux

package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// With session_store set, `mcp-hub pins` works on the pins the replicas
// share in the store, not on the state folder's file.
func TestPinsCommandSessionStore(t *testing.T) {
	t.Setenv("MCP_HUB_STATE_DIR", t.TempDir())
	addr := freeAddr(t)
	startRedis(t, addr)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "hub.yaml")
	cfg := "servers:\n  t: {builtin: time}\nsession_store: redis://" + addr + "/0\nhash_key: " + testHashKey + "\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "--config", cfgPath, "tools"); code != 0 {
		t.Fatalf("tools: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, "--config", cfgPath, "pins")
	if code != 0 || !strings.Contains(out, "session store") || !strings.Contains(out, "pinned") {
		t.Fatalf("pins with session_store: %d\n%s%s", code, out, errOut)
	}
	// The state folder's file holds nothing: the pins are in the store.
	if _, err := os.Stat(filepath.Join(os.Getenv("MCP_HUB_STATE_DIR"), "pins.json")); err == nil {
		t.Error("pins were written to the state folder too")
	}
}

// runCLI runs the mcp-hub binary with args: its exit code, stdout and
// stderr.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	stdout, stderr, code = runMainSplit(t, args...)
	return code, stdout, stderr
}
