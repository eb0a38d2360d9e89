package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// Where the hub's pieces appear inside a Linux sandbox.
const (
	helperAt  = "/run/mcp-hub/helper"
	netDirAt  = "/run/mcp-hub/net"
	socketAt  = netDirAt + "/proxy.sock"
	forwardAt = "127.0.0.1:3128" // the sandbox has a loopback of its own: any port is free
)

// installHint is what to do when bubblewrap is missing.
const installHint = "install bubblewrap (Debian, Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap; Arch: pacman -S bubblewrap), or set 'sandbox: false' on the server to run it unconfined"

// wrap makes cmd run `bwrap ARGS -- helper SPEC server...`.
func (r *Runner) wrap(ctx context.Context, p *plan, cmd *exec.Cmd) (func(), error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, fmt.Errorf("bubblewrap (bwrap) is not installed, and the server asks for a sandbox, so it does not start: %s", installHint)
	}
	helper := r.opts.Helper
	if helper == "" {
		if helper, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding the hub's executable for the sandbox helper: %w", err)
		}
	}
	spec := helperSpec{Landlock: landlockFor(p)}
	release := func() {}
	var sockDir string
	if len(p.network) > 0 {
		// A folder of its own, private, with a short path: a Unix socket
		// path has at most 107 bytes.
		if sockDir, err = os.MkdirTemp("", "mcp-hub-net-"); err != nil {
			return nil, err
		}
		ln, err := net.Listen("unix", filepath.Join(sockDir, "proxy.sock"))
		if err != nil {
			os.RemoveAll(sockDir)
			return nil, fmt.Errorf("the network proxy: %w", err)
		}
		px := newProxy(p.server, p.network, r.opts.Logger)
		go px.serve(ln)
		release = func() {
			ln.Close()
			px.close()
			os.RemoveAll(sockDir)
		}
		spec.Forward, spec.Socket = forwardAt, socketAt
	}
	specJSON, err := json.Marshal(spec)
	if err != nil {
		release()
		return nil, err
	}
	args := append([]string{bwrap}, bwrapArgs(p, helper, sockDir)...)
	args = append(args, "--", helperAt, HelperCommand, string(specJSON), p.command)
	args = append(args, p.args...)
	cmd.Path, cmd.Args = bwrap, args
	cmd.Dir = ""
	proxyURL := ""
	if spec.Forward != "" {
		proxyURL = "http://" + spec.Forward
	}
	cmd.Env = sandboxEnv(cmd.Env, p.homeAt, proxyURL)
	return release, nil
}

// bwrapArgs is bubblewrap's command line for p, before `--`. Later mounts
// cover earlier ones: the system, then the private home and tmp, then what
// the server is given, then the masks, last, so nothing given can uncover
// the hub's files.
func bwrapArgs(p *plan, helper, sockDir string) []string {
	a := []string{
		"--die-with-parent", // the sandbox ends with the hub
		"--new-session",     // no ioctl(TIOCSTI) into a terminal
		"--unshare-all",     // user, pid, network, ipc, uts and cgroup namespaces: no network, no other processes
		"--cap-drop", "ALL",
	}
	for _, d := range systemDirs() {
		if t, err := os.Readlink(d); err == nil && filepath.Dir(d) == "/" {
			a = append(a, "--symlink", t, d) // merged /usr: /bin -> usr/bin
			continue
		}
		a = append(a, "--ro-bind-try", d, d)
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
	for _, d := range sysDirs() {
		a = append(a, "--ro-bind-try", d, d)
	}
	// Folders bwrap would make in /tmp to hold what is mounted there are
	// made read-only first (no capabilities: root inside obeys modes), so
	// a write next to a given folder fails instead of landing unseen in
	// the sandbox's own /tmp.
	dests := []string{p.homeAt}
	dests = append(append(dests, p.readable...), p.writable...)
	for _, al := range p.aliases {
		dests = append(dests, al.name)
	}
	var made []string
	for _, d := range dests {
		for _, anc := range ancestorsUnder("/tmp", d) {
			if !slices.Contains(made, anc) {
				made = append(made, anc)
				a = append(a, "--perms", "0555", "--dir", anc)
			}
		}
	}
	a = append(a, "--bind", p.home, p.homeAt)
	for _, r := range p.readable {
		a = append(a, "--ro-bind", r, r)
	}
	for _, w := range p.writable {
		a = append(a, "--bind", w, w)
	}
	for _, al := range p.aliases {
		if al.write {
			a = append(a, "--bind", al.target, al.name)
		} else {
			a = append(a, "--ro-bind", al.target, al.name)
		}
	}
	a = append(a, "--ro-bind", helper, helperAt)
	if sockDir != "" {
		a = append(a, "--ro-bind", sockDir, netDirAt)
	}
	for _, m := range append(maskedSystemFiles(), p.hidden...) {
		st, err := os.Stat(m)
		if err != nil {
			continue
		}
		// Where it shows: at its path, and under every alias of a folder
		// holding it (a second mount of the same folder, which a mask on
		// the first does not cover).
		at := []string{m}
		for _, al := range p.aliases {
			if rel, err := filepath.Rel(al.target, m); err == nil && within(m, al.target) {
				at = append(at, filepath.Join(al.name, rel))
			}
		}
		for _, where := range at {
			switch {
			case !visible(p, where):
			case st.IsDir():
				a = append(a, "--tmpfs", where, "--remount-ro", where)
			default:
				a = append(a, "--ro-bind", "/dev/null", where)
			}
		}
	}
	chdir := p.homeAt
	if p.cwd != "" {
		chdir = p.cwd
	}
	// The root bwrap builds (the folders holding the mounts) read-only:
	// writable are only the home, /tmp and the write paths.
	return append(a, "--remount-ro", "/", "--chdir", chdir)
}

// sysDirs are the parts of /sys runtimes read to size themselves: Go's
// huge page size and CPU limit, Node's and the JVM's memory limit, the
// CPU count. Read-only; the rest of /sys is not shown.
func sysDirs() []string {
	return []string{"/sys/kernel/mm/transparent_hugepage", "/sys/fs/cgroup", "/sys/devices/system/cpu"}
}

// ancestorsUnder lists the folders strictly between base and p, outermost
// first: /tmp, /tmp/a/b/c gives /tmp/a, /tmp/a/b.
func ancestorsUnder(base, p string) []string {
	if !within(p, base) || p == base {
		return nil
	}
	var out []string
	for d := filepath.Dir(p); d != base && within(d, base); d = filepath.Dir(d) {
		out = append([]string{d}, out...)
	}
	return out
}

// visible reports whether path would be seen in p's sandbox without a
// mask.
func visible(p *plan, path string) bool {
	for _, list := range [][]string{systemDirs(), p.readable, p.writable} {
		for _, d := range list {
			if within(path, d) {
				return true
			}
		}
	}
	for _, al := range p.aliases {
		if within(path, al.name) {
			return true
		}
	}
	return false
}

// errNoHelperSpec is a sandbox-exec run without its arguments.
var errNoHelperSpec = errors.New("usage: mcp-hub sandbox-exec SPEC COMMAND [ARG...] (run by the hub inside a sandbox, not by hand)")
