package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
)

// Options are the hub's, the same for every server it sandboxes.
type Options struct {
	// Hidden are paths no sandboxed server may see even when something it
	// is given contains them: the hub's config file, its state folder
	// (tokens, pins, vectors, the other servers' homes) and its audit log.
	Hidden []string
	// StateDir holds each server's private home,
	// <StateDir>/sandbox/<server>/home, kept across restarts so that
	// npx and uvx caches work. Required.
	StateDir string
	// Helper is the program run inside the Linux sandbox before the server
	// (`mcp-hub sandbox-exec`, see RunHelper); default: this executable.
	Helper string
	Logger *slog.Logger
}

// Runner sandboxes stdio servers: Wrap turns the command that would run a
// server into one that runs it confined.
type Runner struct {
	opts Options
}

// New returns a Runner. It checks nothing yet: a missing bubblewrap is
// reported by Wrap, for the servers that ask for a sandbox only.
func New(opts Options) *Runner {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Runner{opts: opts}
}

// Wrap rewrites cmd, built to run the server unconfined (Path, Args, Env,
// Dir set), to run it in the sandbox box describes. release frees what the
// sandbox holds for this process (its network proxy, when it has one):
// call it once the process has exited, or if it is never started. A
// sandbox that cannot be set up is an error: the server must not start.
func (r *Runner) Wrap(ctx context.Context, server string, box *config.Sandbox, cmd *exec.Cmd) (release func(), err error) {
	if !box.On() {
		return func() {}, nil
	}
	p, err := r.plan(server, box, cmd)
	if err != nil {
		return nil, fmt.Errorf("server %s: sandbox: %w", server, err)
	}
	release, err = r.wrap(ctx, p, cmd)
	if err != nil {
		return nil, fmt.Errorf("server %s: sandbox: %w", server, err)
	}
	return release, nil
}

// plan is what a server may see and reach, resolved on the host: every
// path absolute, clean and free of symbolic links.
type plan struct {
	server  string
	command string // the server's executable
	args    []string
	// home is the host folder that is the server's home; homeAt is where
	// it appears inside (the user's home path, so that ~ means the same).
	home, homeAt string
	cwd          string // "" when the config sets none: it starts in home
	readable     []string
	writable     []string
	// aliases are paths given by a name that is a symbolic link
	// elsewhere: the link's target is mounted at the name too, since the
	// link itself may be in a folder the sandbox does not show.
	aliases []alias
	hidden  []string
	network []config.NetworkEntry
}

// alias mounts target at name, read-only unless write.
type alias struct {
	target, name string
	write        bool
}

// addAlias records name when it is not target itself.
func (p *plan) addAlias(target, name string, write bool) {
	name = filepath.Clean(name)
	if name == target || !filepath.IsAbs(name) {
		return
	}
	for _, a := range p.aliases {
		if a.name == name {
			return
		}
	}
	p.aliases = append(p.aliases, alias{target: target, name: name, write: write})
}

// plan resolves box for one start of cmd.
func (r *Runner) plan(server string, box *config.Sandbox, cmd *exec.Cmd) (*plan, error) {
	if r.opts.StateDir == "" {
		return nil, fmt.Errorf("no state folder for the server's private home (set %s)", "MCP_HUB_STATE_DIR")
	}
	p := &plan{server: server, args: cmd.Args[1:], cwd: cmd.Dir}
	for _, h := range r.opts.Hidden {
		if h == "" {
			continue
		}
		p.hidden = append(p.hidden, realPath(h))
	}
	var err error
	if p.command, err = filepath.Abs(cmd.Path); err != nil {
		return nil, err
	}
	p.command = realPath(p.command)
	p.home = filepath.Join(r.opts.StateDir, "sandbox", safeName(server), "home")
	if err := os.MkdirAll(p.home, 0o700); err != nil {
		return nil, fmt.Errorf("creating the server's home: %w", err)
	}
	p.homeAt = "/home/mcp"
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) && filepath.Clean(h) != "/" && !systemPath(h) {
		p.homeAt = filepath.Clean(h)
	}
	for _, n := range box.Network {
		e, err := config.ParseNetworkEntry(n)
		if err != nil {
			return nil, err
		}
		p.network = append(p.network, e)
	}
	// What it runs and what its arguments name is readable: a script, a
	// folder to serve. A file in a node_modules folder brings the whole
	// folder, the package's dependencies.
	named := []string{p.command}
	if p.cwd != "" {
		named = append(named, p.cwd)
	}
	for _, a := range p.args {
		if _, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "-") {
			a = v
		}
		if filepath.IsAbs(a) {
			named = append(named, a)
		}
	}
	userHome, _ := os.UserHomeDir()
	for _, n := range named {
		if _, err := os.Stat(n); err != nil {
			continue // not a path after all, or not there: nothing to show
		}
		real := realPath(n)
		if real == "/" || userHome != "" && real == realPath(userHome) {
			continue // the whole system or home only by an explicit `read`
		}
		if nm := nodeModules(real); nm != "" {
			p.readable = appendNew(p.readable, nm)
			continue
		}
		p.readable = appendNew(p.readable, real)
		if n != p.command {
			p.addAlias(real, n, false)
		}
	}
	for _, list := range []struct {
		key   string
		paths []string
		into  *[]string
	}{{"read", box.Read, &p.readable}, {"write", box.Write, &p.writable}} {
		for _, path := range list.paths {
			if _, err := os.Stat(path); err != nil {
				return nil, fmt.Errorf("sandbox.%s: %w", list.key, err)
			}
			real := realPath(path)
			for _, h := range p.hidden {
				if within(real, h) || within(h, real) && list.key == "write" {
					return nil, fmt.Errorf("sandbox.%s: %s holds the hub's own files (%s), which no server may see", list.key, path, h)
				}
			}
			*list.into = appendNew(*list.into, real)
			p.addAlias(real, path, list.key == "write")
		}
	}
	return p, nil
}

// realPath resolves symbolic links where it can: a mount follows them, and
// a hidden file must be hidden where it really is.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is base or under it.
func within(p, base string) bool {
	if p == base {
		return true
	}
	rel, err := filepath.Rel(base, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// nodeModules returns the outermost node_modules folder p is in, or "".
func nodeModules(p string) string {
	sep := string(filepath.Separator)
	i := strings.Index(p, sep+"node_modules"+sep)
	if i < 0 {
		return ""
	}
	return p[:i+len(sep+"node_modules")]
}

// systemPath reports whether p is in the system folders every sandbox
// sees read-only anyway.
func systemPath(p string) bool {
	for _, s := range systemDirs() {
		if within(p, s) {
			return true
		}
	}
	return false
}

// systemDirs are shown read-only to every sandboxed server: programs,
// libraries and their configuration, without which nothing runs. /etc is
// shown minus maskedSystemFiles; /home, /root, /var, /srv, /mnt, /media and
// /tmp are not shown.
func systemDirs() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store"}
}

// maskedSystemFiles are the secrets of a system folder a server is shown:
// password hashes, host keys, private TLS keys, credentials of system
// services. Masked whether or not the hub could read them: in the sandbox
// the server may be root of its own user namespace.
func maskedSystemFiles() []string {
	return []string{
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
		"/etc/sudoers", "/etc/sudoers.d", "/etc/ssh", "/etc/ssl/private",
		"/etc/security/opasswd", "/etc/krb5.keytab", "/etc/mcp-hub",
	}
}

func appendNew(list []string, p string) []string {
	if slices.Contains(list, p) {
		return list
	}
	return append(list, p)
}

// safeName makes a server name a folder name on every platform: its safe
// characters plus a hash of the whole name, so two names never share a
// home.
func safeName(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteRune('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	sum := sha256.Sum256([]byte(name))
	return strings.Trim(b.String(), ".") + "-" + hex.EncodeToString(sum[:4])
}

// setEnv replaces or adds variables in env (KEY=VALUE entries).
func setEnv(env []string, kv ...string) []string {
	for i := 0; i+1 < len(kv); i += 2 {
		k, v := kv[i], kv[i+1]
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") })
		if v != "" {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// sandboxEnv is the server's environment in the sandbox: the hub already
// reduced it (upstream's childEnv); here home and temporary folders point
// to the sandbox's own, and XDG folders, which named the user's, are
// dropped so that programs fall back to the private home.
func sandboxEnv(env []string, home string, proxy string) []string {
	env = setEnv(env, "HOME", home, "TMPDIR", "/tmp",
		"XDG_CONFIG_HOME", "", "XDG_DATA_HOME", "", "XDG_CACHE_HOME", "", "XDG_STATE_HOME", "", "XDG_RUNTIME_DIR", "")
	if proxy != "" {
		// Both spellings: tools disagree on which they read. Node's own
		// fetch reads them with NODE_USE_ENV_PROXY (Node 22.21+, 24).
		env = setEnv(env, "HTTP_PROXY", proxy, "HTTPS_PROXY", proxy, "ALL_PROXY", proxy,
			"http_proxy", proxy, "https_proxy", proxy, "all_proxy", proxy,
			"NO_PROXY", "", "no_proxy", "", "NODE_USE_ENV_PROXY", "1")
	}
	return env
}
