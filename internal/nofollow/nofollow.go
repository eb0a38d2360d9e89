// Package nofollow opens the files mcp-hub creates in its own folders
// (token records and their locks, client config backups) without
// following a symbolic link planted at the path: whoever can write the
// folder must not get the hub to create or change a file elsewhere.
//
// Reading such a file back goes through OpenOwned or ReadOwned (owned.go),
// which also refuse what the hub cannot have written (a FIFO, another
// user's file, a file others may write, one above its size limit), and
// never block on what they find at the path.
package nofollow

import (
	"errors"
	"io"
	"io/fs"
	"os"
)

// ErrSymlink is the error for a path that is a symbolic link (or, on
// Windows, any reparse point: a symlink or a junction).
var ErrSymlink = errors.New("is a symbolic link: refusing to follow it")

// OpenFile is os.OpenFile, except that a symbolic link at path itself is
// refused with an error wrapping ErrSymlink, and neither it nor its target
// is changed. Links in the folders above path are followed as usual.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	f, err := openFile(path, flag, perm)
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, symlinkError(path)
		}
		return nil, err
	}
	return f, nil
}

// ReadFile is os.ReadFile through OpenFile, except that it refuses
// anything but a regular file, and a FIFO at path does not block it.
func ReadFile(path string) ([]byte, error) {
	f, err := openReadNonblock(path)
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, symlinkError(path)
		}
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return io.ReadAll(f)
}

func symlinkError(path string) error {
	return &fs.PathError{Op: "open", Path: path, Err: ErrSymlink}
}
