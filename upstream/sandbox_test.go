package upstream

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

// TestSandboxFailsClosed: a stdio server that asks for a sandbox, in a hub
// with none to run it in, does not start; one that does not ask starts as
// before; Status says which.
func TestSandboxFailsClosed(t *testing.T) {
	boxed := New(config.Upstream{Name: "boxed", Command: "true", Sandbox: &config.Sandbox{Enabled: true}}, nil, Options{})
	if _, err := boxed.sandbox(context.Background(), exec.Command("true")); err == nil || !strings.Contains(err.Error(), "does not start") {
		t.Fatalf("sandbox without a Sandboxer = %v, want an error", err)
	}
	if _, err := boxed.commandTransport(context.Background(), nil); err == nil {
		t.Fatal("commandTransport started a server that asks for a sandbox, with none to run it in")
	}
	if got := boxed.Status().Sandbox; got != "on, no network" {
		t.Errorf("Status().Sandbox = %q", got)
	}
	open := New(config.Upstream{Name: "open", Command: "true"}, nil, Options{})
	if release, err := open.sandbox(context.Background(), exec.Command("true")); err != nil || release == nil {
		t.Fatalf("no sandbox asked: %v", err)
	}
	if got := open.Status().Sandbox; got != "off" {
		t.Errorf("Status().Sandbox = %q, want off", got)
	}
}
