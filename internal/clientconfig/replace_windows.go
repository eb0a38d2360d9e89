//go:build windows

package clientconfig

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// replaceFile renames src over dst. Go's os.Rename is MoveFileEx with
// MOVEFILE_REPLACE_EXISTING, atomic on NTFS; it fails while another
// program holds dst open without sharing delete, so it is retried.
func replaceFile(src, dst string) error {
	return replaceWithRetry(func() error { return os.Rename(src, dst) }, func(err error) bool {
		var errno syscall.Errno
		return errors.As(err, &errno) && windowsBusy(uintptr(errno))
	}, time.Sleep)
}

// syncDir: Windows has no directory sync; MoveFileEx is durable enough.
func syncDir(string) {}
