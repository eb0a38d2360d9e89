//go:build unix

package nofollow

import (
	"io/fs"
	"os"
	"syscall"
)

// openFile adds O_NOFOLLOW: the kernel refuses a link at the last
// component (ELOOP), with no window between a check and the open.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
}
