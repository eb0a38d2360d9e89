package sandbox

import (
	"fmt"
	"strconv"
	"strings"
)

// seatbeltSystem are the folders a macOS sandbox reads: the system, its
// libraries and frameworks, Homebrew and MacPorts.
func seatbeltSystem() []string {
	return []string{"/usr", "/bin", "/sbin", "/System", "/Library", "/opt", "/private/etc", "/private/var/db", "/Applications/Xcode.app", "/dev"}
}

// seatbeltProfile is the sandbox-exec profile (SBPL) for p on macOS, where
// nothing can be remounted: the server's home is its own folder (HOME
// points there) and the rest of the user's home is simply not allowed.
// The last matching rule wins, so the order is the Linux mounts' order:
// the system, what the server is given, the hub's files denied, and the
// server's own home and temporary folder allowed again (they live in the
// hub's state folder). proxyPort, if not 0, is the one TCP port it may
// connect to: the hub's proxy on the loopback.
func seatbeltProfile(p *plan, tmp string, proxyPort int) string {
	var b strings.Builder
	rule := func(format string, paths ...string) {
		if len(paths) == 0 {
			return
		}
		var q []string
		for _, s := range paths {
			q = append(q, "(subpath "+sbplString(s)+")")
		}
		fmt.Fprintf(&b, format+"\n", strings.Join(q, " "))
	}
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-exec process-fork)\n(allow signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read mach-lookup ipc-posix-shm-read-data ipc-posix-shm-write-data ipc-posix-shm-write-create ipc-posix-sem)\n")
	b.WriteString("(allow file-read-metadata)\n(allow file-read* (literal \"/\"))\n")
	b.WriteString("(allow file-write* (literal \"/dev/null\") (literal \"/dev/tty\") (literal \"/dev/dtracehelper\"))\n")
	rule("(allow file-read* %s)", seatbeltSystem()...)
	rule("(allow file-read* %s)", p.readable...)
	rule("(allow file-read* file-write* %s)", p.writable...)
	rule("(deny file-read* file-write* %s)", append(append([]string{}, maskedSystemFiles()...), p.hidden...)...)
	rule("(allow file-read* file-write* %s)", p.home, tmp)
	if proxyPort != 0 {
		fmt.Fprintf(&b, "(allow network-outbound (remote tcp %s))\n", sbplString("localhost:"+strconv.Itoa(proxyPort)))
	}
	return b.String()
}

// sbplString quotes s for SBPL, whose strings escape like C's.
func sbplString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}
