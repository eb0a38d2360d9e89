//go:build unix

package builtin

import (
	"fmt"
	"os"
	"syscall"
)

// lockFile takes an exclusive advisory lock on path+".lock", so that several
// hub processes (or several stores in one process) sharing one notes file
// serialise their read-modify-write cycles. The returned func releases it.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
