//go:build unix

package tokenstore

import (
	"errors"
	"os"
	"syscall"
)

const isWindows = false

// tryLock takes an exclusive flock on f without blocking. flock belongs to
// the open file, so two opens of the lock file exclude each other even in
// one process.
func tryLock(f *os.File) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }

// replaceFile renames over dst; atomic on one file system.
func replaceFile(src, dst string) error { return os.Rename(src, dst) }
