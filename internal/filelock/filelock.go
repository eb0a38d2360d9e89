// Package filelock takes an exclusive lock on a file that several mcp-hub
// processes share (a token record, the notes file, the pins): an advisory
// lock on a companion lock file, flock on Unix and LockFileEx on Windows.
// The lock belongs to the open file, so two Locks exclude each other even
// within one process. Waiting honours the context: a process that holds a
// lock forever cannot hang a caller.
package filelock

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/nofollow"
)

// retry is how often Lock tries again while another holder has the lock.
const retry = 10 * time.Millisecond

// Lock takes the exclusive lock of path (a lock file, created 0600 if
// missing, never through a symbolic link planted at its name) and returns
// the function that releases it.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	f, err := nofollow.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if ok {
			return func() { unlockFile(f); f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("%s is locked by another mcp-hub process (%w)", path, ctx.Err())
		case <-time.After(retry):
		}
	}
}
