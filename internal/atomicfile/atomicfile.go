// Package atomicfile replaces files so that a reader, or a crash, sees the
// old file or the new one, never half of one: the new content goes to a
// temporary file in the same folder, which is synced and renamed over the
// old. It is the one way mcp-hub replaces a file it keeps (token records,
// the notes file, the embeddings cache, pins, client configs).
//
// The temporary file is created exclusively (never through a link planted
// at its name), and the rename replaces a link at the target rather than
// following it. On Windows a file another program holds open without
// sharing delete (an editor, a virus scanner) cannot be replaced for a
// moment: the rename is retried for about a second on the errors that
// mean that, and on no others.
package atomicfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// WriteFile replaces path with data; the file gets perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data) // a short write is an error
		return err
	})
}

// Write replaces path with what write writes; the file gets perm. If write
// or anything after it fails, the temporary file is removed and path is as
// it was.
func Write(path string, perm fs.FileMode, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("replace %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = fmt.Errorf("replace %s: %w", path, err)
		}
	}()
	// Before the content: a secret never sits in a file others may read.
	if err := tmp.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) && !isWindows {
		return err
	}
	if err := write(tmp); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	rename := func() error { return os.Rename(tmp.Name(), path) }
	if err := renameRetrying(rename, retryable, time.Sleep); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// renameRetrying renames, retrying while retryable says another program
// holds the target for a moment: 10 ms doubling, eight tries, about 1.3 s
// in all.
func renameRetrying(rename func() error, retryable func(error) bool, sleep func(time.Duration)) error {
	wait := 10 * time.Millisecond
	for try := 1; ; try++ {
		err := rename()
		if err == nil || !retryable(err) || try == 8 {
			return err
		}
		sleep(wait)
		wait *= 2
	}
}

// windowsBusy reports whether a Windows error code means "the file is in
// use for a moment": ERROR_ACCESS_DENIED (a pending delete, or a scanner
// holding the file), ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION. Here,
// not in the Windows file, so that the rule is tested on every system.
func windowsBusy(errno uintptr) bool {
	switch errno {
	case 5, 32, 33:
		return true
	}
	return false
}
