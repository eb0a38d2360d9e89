//go:build !linux

package upstream

import "os/exec"

func setChildAttrs(cmd *exec.Cmd) {}
