//go:build !linux

package upstream

import (
	"os"
	"os/exec"
	"syscall"
)

func setChildAttrs(cmd *exec.Cmd) {}

func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	if sig == syscall.SIGKILL {
		cmd.Process.Kill()
		return
	}
	cmd.Process.Signal(os.Interrupt)
}
