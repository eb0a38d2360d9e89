//go:build unix

package nofollow

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// openFile adds O_NOFOLLOW: the kernel refuses a link at the last
// component (ELOOP), with no window between a check and the open.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|syscall.O_NOFOLLOW, perm)
}

// openReadNonblock opens read-only without following a link and without
// waiting: O_NONBLOCK makes the open of a FIFO return at once (and has no
// effect on a regular file's reads).
func openReadNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}

// checkOwner: the hub's own user, and nobody else may write.
func checkOwner(st fs.FileInfo) error {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Errorf("%w (no owner known)", ErrNotOwned)
	}
	if uid := os.Geteuid(); int(sys.Uid) != uid {
		return fmt.Errorf("%w (uid %d, the hub runs as %d)", ErrNotOwned, sys.Uid, uid)
	}
	if perm := st.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("%w (mode %#o)", ErrWritable, perm)
	}
	return nil
}
