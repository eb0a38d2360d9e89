package sandbox

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
)

// sandboxExec is macOS's own sandbox tool.
const sandboxExec = "/usr/bin/sandbox-exec"

// wrap makes cmd run `sandbox-exec -p PROFILE server...`. The proxy
// listens on the loopback, on a port the profile lets this server reach
// and nothing else.
func (r *Runner) wrap(ctx context.Context, p *plan, cmd *exec.Cmd) (func(), error) {
	if _, err := os.Stat(sandboxExec); err != nil {
		return nil, fmt.Errorf("%s is missing, and the server asks for a sandbox, so it does not start: it comes with macOS; or set 'sandbox: false' on the server", sandboxExec)
	}
	p.homeAt = p.home
	tmp := filepath.Join(filepath.Dir(p.home), "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, err
	}
	release := func() {}
	proxyURL, port := "", 0
	if len(p.network) > 0 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("the network proxy: %w", err)
		}
		px := newProxy(p.server, p.network, r.opts.Logger)
		go px.serve(ln)
		release = func() { ln.Close(); px.close() }
		port = ln.Addr().(*net.TCPAddr).Port
		proxyURL = fmt.Sprintf("http://127.0.0.1:%d", port)
	}
	args := []string{sandboxExec, "-p", seatbeltProfile(p, tmp, port), p.command}
	cmd.Path, cmd.Args = sandboxExec, append(args, p.args...)
	if cmd.Dir == "" {
		cmd.Dir = p.home
	}
	cmd.Env = sandboxEnv(cmd.Env, p.home, proxyURL)
	cmd.Env = setEnv(cmd.Env, "TMPDIR", tmp)
	return release, nil
}
