//go:build linux

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestVersionStamped: the version the release build stamps with
// -X github.com/mcp-hub/mcp-hub/internal/version.Version (as the Makefile
// does) is what `mcp-hub version` prints, with the go-sdk build it has,
// and what the hub sends its clients as serverInfo.
func TestVersionStamped(t *testing.T) {
	const stamp = "v0.0.0-stamp-test"
	bin := filepath.Join(t.TempDir(), "mcp-hub")
	// From the module's root, which ./cmd/mcp-hub is relative to.
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs",
		"-ldflags", "-X github.com/mcp-hub/mcp-hub/internal/version.Version="+stamp, "-o", bin, "./cmd/mcp-hub")
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("mcp-hub version: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 || lines[0] != "mcp-hub "+stamp || !strings.Contains(lines[1], sdkBuild) {
		t.Errorf("mcp-hub version printed:\n%s\nwant the stamp %s, then the go-sdk build", out, stamp)
	}

	serve := exec.Command(bin, "--config", fixture.WriteFile(t, "hub.yaml", "servers:\n  time: {builtin: time}\n"), "serve")
	stdin, _ := serve.StdinPipe()
	stdout, _ := serve.StdoutPipe()
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		serve.Wait()
	})
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"version-test","version":"0"}}}`+"\n")
	var answer struct {
		ID     int
		Result struct {
			ServerInfo struct{ Name, Version string }
		}
	}
	if err := json.NewDecoder(bufio.NewReader(stdout)).Decode(&answer); err != nil {
		t.Fatalf("reading the initialize answer: %v", err)
	}
	if answer.ID != 1 || answer.Result.ServerInfo.Name != "mcp-hub" || answer.Result.ServerInfo.Version != stamp {
		t.Errorf("serverInfo = %+v, want mcp-hub %s", answer.Result.ServerInfo, stamp)
	}
}
