// Package sandbox confines the stdio servers the hub launches, most of
// them fetched by npx or uvx from a package registry on each start, so
// that one of them turning hostile cannot read the user's keys, the hub's
// config and tokens, write where it likes or reach any host.
//
// The model: a server's `sandbox:` (config.Sandbox) is a profile; Wrap
// turns it into a platform wrapper around the server's command plus, when
// the profile lists hosts, a network proxy of the hub's own.
//
//   - Profile. By default a sandboxed server sees the system read-only
//     (/usr, /bin, /lib*, /etc minus its secrets, /opt: systemDirs and
//     maskedSystemFiles), its own command, the files and folders its
//     arguments name, its `cwd`, and a home of its own:
//     <state folder>/sandbox/<server>/home, kept across restarts so that
//     npm's and uv's caches survive, and mounted where the user's home is so
//     that ~ means the same path. /tmp is empty and its own. None of the
//     user's home is visible; `read` and `write` add paths. The hub's own
//     files (Options.Hidden: its config file, state folder with the token
//     store and the other servers' homes, audit log) are masked last, so
//     nothing a server is given can uncover them, and asking for them in
//     `read`/`write` is an error.
//   - Linux wrapper: bubblewrap (bwrap_linux.go), in new user, PID, network,
//     IPC, UTS and cgroup namespaces, no capabilities, dying with the hub.
//     The first process inside is the hub itself (`mcp-hub sandbox-exec`,
//     RunHelper, helper_linux.go), which restricts the file system again
//     with Landlock where the kernel has it (landlock_linux.go: the same
//     paths, a second layer), then execs the server, or, when the server
//     has a network, stays as its parent to relay proxy connections.
//   - Network. A new network namespace has only its own loopback: nothing
//     else is reachable, by any protocol. With `network` entries the hub
//     runs an HTTP proxy for that server (proxy.go: CONNECT and plain
//     http:// requests) on a Unix socket mounted into the sandbox; the
//     helper listens on 127.0.0.1:3128 inside and relays to it, and
//     HTTP_PROXY, HTTPS_PROXY and ALL_PROXY point there. The proxy allows
//     `host` on ports 80 and 443, `host:port` on that port only and
//     `*.domain` for subdomains, and refuses a name that resolves to
//     loopback or link-local addresses; every connection, header and
//     timeout is bounded (MaxProxyConns and the other Proxy constants).
//   - macOS wrapper: sandbox-exec with a generated profile (seatbelt.go):
//     deny by default, the same reads and writes, the home as a folder of
//     its own (HOME points there), and outbound TCP only to the hub's proxy
//     on a loopback port.
//   - Elsewhere (Windows) there is no sandbox: Wrap fails, and so does a
//     Linux or macOS host without its tool. A server that asks for a
//     sandbox never runs without one; the error says what to install.
//
// What stays visible by default, and why: the system folders, because
// interpreters and their libraries live there and are the same for every
// user; the few parts of /sys runtimes size themselves by (sysDirs: cgroup
// limits, CPUs, huge pages), read-only, without which Go, Node and the JVM
// guess; /proc of the sandbox's own processes only (a new PID namespace, so
// the hub's environment in /proc/PID/environ is out of reach); the
// environment the hub gives every stdio server (already reduced to PATH,
// LANG and the like, see package upstream), with HOME and TMPDIR pointing
// into the sandbox.
//
// Wrap runs once per start of a server; it adds nothing to a call: the
// server's stdin and stdout are the pipes the hub reads, whatever wraps it.
package sandbox
