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

// signalGroup signals the server's process group (it leads one, see
// setChildAttrs), so that helpers it started stop with it.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		cmd.Process.Signal(sig)
	}
}
