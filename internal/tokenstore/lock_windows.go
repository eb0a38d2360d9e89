//go:build windows

package tokenstore

import (
	"errors"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

const isWindows = true

// tryLock takes an exclusive LockFileEx lock on the first byte of f
// without blocking.
func tryLock(f *os.File) (bool, error) {
	var ol windows.Overlapped
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) {
	var ol windows.Overlapped
	windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// replaceFile renames over dst (MoveFileEx with MOVEFILE_REPLACE_EXISTING).
// Readers of this package hold the record's lock, but a virus scanner or
// an editor may have dst open for a moment: retry briefly on "access
// denied" and sharing violations.
func replaceFile(src, dst string) error {
	// About a second in all.
	retries := []time.Duration{10 * time.Millisecond, 30 * time.Millisecond, 60 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond}
	var err error
	for _, wait := range retries {
		if err = os.Rename(src, dst); err == nil || !retryableRename(err) {
			return err
		}
		time.Sleep(wait)
	}
	return err
}

func retryableRename(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
