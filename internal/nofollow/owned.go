package nofollow

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// Refusals of OpenOwned and ReadOwned, besides ErrSymlink. Each names
// what was wrong with the file, never what it holds.
var (
	// ErrNotRegular: a FIFO, socket, device or folder at the path.
	ErrNotRegular = errors.New("is not a regular file")
	// ErrNotOwned: the file belongs to another user (Unix).
	ErrNotOwned = errors.New("is owned by another user")
	// ErrWritable: group or others may write the file (Unix).
	ErrWritable = errors.New("is writable by group or others")
	// ErrTooLarge: the file is above the caller's limit.
	ErrTooLarge = errors.New("is larger than its limit")
)

// Refused reports whether err is one of the refusals of OpenOwned (a
// link, not a regular file, another owner, a loose mode, too large), as
// opposed to an absent file or an I/O error. A caller warns and treats a
// refused cache as absent, or fails where the file is required.
func Refused(err error) bool {
	return errors.Is(err, ErrSymlink) || errors.Is(err, ErrNotRegular) || errors.Is(err, ErrNotOwned) ||
		errors.Is(err, ErrWritable) || errors.Is(err, ErrTooLarge)
}

// OpenOwned opens for reading a file the hub keeps in its own folders
// (state and cache), trusting it only if the hub could have written it:
//
//   - a symbolic link at path is refused, not followed (ErrSymlink);
//   - the open never blocks (O_NONBLOCK on Unix: a FIFO planted at the
//     path would otherwise hang the open until a writer came), and
//     anything but a regular file is refused (ErrNotRegular);
//   - on Unix the file must belong to the hub's user (ErrNotOwned) and
//     be writable by nobody else (ErrWritable); on Windows the folder's
//     ACL decides, as it does for the files the hub creates there;
//   - a file above limit bytes is refused (ErrTooLarge).
//
// The caller must still read at most limit bytes (the file may grow after
// the check): ReadOwned does. Errors are *fs.PathError naming path and
// the reason, never the content; an absent file is fs.ErrNotExist.
func OpenOwned(path string, limit int64) (*os.File, fs.FileInfo, error) {
	f, err := openReadNonblock(path)
	if err != nil {
		if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, nil, symlinkError(path)
		}
		return nil, nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = checkOwned(st, limit)
	}
	if err != nil {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return f, st, nil
}

// ReadOwned reads a whole file through OpenOwned, at most limit bytes.
func ReadOwned(path string, limit int64) ([]byte, error) {
	f, _, err := OpenOwned(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (%d bytes)", ErrTooLarge, limit)}
	}
	return data, nil
}

func checkOwned(st fs.FileInfo, limit int64) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotRegular, st.Mode().Type())
	}
	if err := checkOwner(st); err != nil {
		return err
	}
	if st.Size() > limit {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, st.Size(), limit)
	}
	return nil
}
