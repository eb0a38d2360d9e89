package tokenstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/nofollow"
)

// WriteFileAtomic replaces path with data at once: a temporary file in the
// same folder, mode 0600, written, synced, then renamed over path (a link
// planted at path is replaced, never followed). A reader sees the old file
// or the new one, never half of one. The token records use it, and so do
// other state files of the hub (package pin).
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename there is nothing left to remove
	if err := f.Chmod(0o600); err != nil && !isWindows {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return replaceFile(tmp, path)
}

// LockFile takes an exclusive lock on the file at path (created, mode
// 0600, never through a link planted there), waiting up to wait for
// another process (or another open in this one) to let go. unlock
// releases it.
func LockFile(ctx context.Context, path string, wait time.Duration) (unlock func(), err error) {
	f, err := nofollow.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
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
		case <-time.After(10 * time.Millisecond):
		}
	}
}
