//go:build unix

package builtin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/nofollow"
)

// lockRetry is how often lockFile tries again while another process holds
// the lock.
const lockRetry = 10 * time.Millisecond

// lockFile takes an exclusive advisory lock on path+".lock", so that several
// hub processes (or several stores in one process) sharing one notes file
// serialise their read-modify-write cycles. It gives up when ctx ends (a
// process that holds the lock forever cannot hang a call). The returned func
// releases it.
func lockFile(ctx context.Context, path string) (func(), error) {
	// Never through a link planted at the lock's path: the hub would
	// create or lock a file elsewhere.
	f, err := nofollow.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for the lock on %s (held by another process): %w", f.Name(), ctx.Err())
		case <-time.After(lockRetry):
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
