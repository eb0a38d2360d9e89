//go:build windows

package atomicfile

import (
	"errors"
	"syscall"
)

const isWindows = true

// retryable: the errors MoveFileEx gives while another program has the
// target open without FILE_SHARE_DELETE.
func retryable(err error) bool {
	var errno syscall.Errno
	return errors.As(err, &errno) && windowsBusy(uintptr(errno))
}

// syncDir: Windows has no directory sync; MoveFileEx is durable enough.
func syncDir(string) {}
