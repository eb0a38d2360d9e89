package upstream

import (
	"os/exec"
	"syscall"
)

// setChildAttrs makes a stdio server die with the hub even when the hub is
// killed without a chance to clean up, and keeps a terminal's Ctrl-C from
// reaching it directly: the hub decides when its children stop.
func setChildAttrs(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
