//go:build unix

package hub

import "syscall"

// noFollow makes opening a symbolic link fail.
const noFollow = syscall.O_NOFOLLOW
