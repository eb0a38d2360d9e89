//go:build !linux && !darwin

package sandbox

import (
	"context"
	"fmt"
	"os/exec"
	"runtime"
)

// wrap refuses: this system has no sandbox the hub knows how to use, and
// a server that asks for one must not run without it.
func (r *Runner) wrap(ctx context.Context, p *plan, cmd *exec.Cmd) (func(), error) {
	return nil, fmt.Errorf("no sandbox is available on %s (the hub uses bubblewrap on Linux and sandbox-exec on macOS), and the server asks for one, so it does not start: run the hub on Linux or macOS (on Windows, in WSL with bubblewrap installed), or set 'sandbox: false' on the server", runtime.GOOS)
}
