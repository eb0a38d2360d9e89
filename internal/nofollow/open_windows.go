//go:build windows

package nofollow

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// openFile opens with FILE_FLAG_OPEN_REPARSE_POINT, which opens a symlink
// or junction itself instead of its target, and refuses what it opened
// if it is a reparse point: the target is never created nor written.
// perm has no meaning on Windows beyond read-only, which the hub does not
// use; the file inherits the folder's ACL.
func openFile(path string, flag int, _ fs.FileMode) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var access uint32
	switch flag & (os.O_RDONLY | os.O_WRONLY | os.O_RDWR) {
	case os.O_WRONLY:
		access = windows.GENERIC_WRITE
	case os.O_RDWR:
		access = windows.GENERIC_READ | windows.GENERIC_WRITE
	default:
		access = windows.GENERIC_READ
	}
	var disposition uint32
	switch {
	case flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		disposition = windows.CREATE_NEW
	case flag&os.O_CREATE != 0:
		disposition = windows.OPEN_ALWAYS
	default:
		disposition = windows.OPEN_EXISTING
	}
	h, err := windows.CreateFile(name, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		disposition, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		windows.CloseHandle(h)
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0 {
		windows.CloseHandle(h)
		return nil, symlinkError(path)
	}
	f := os.NewFile(uintptr(h), path)
	if flag&os.O_TRUNC != 0 {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// openReadNonblock is openFile read-only: a path in a folder cannot be a
// pipe on Windows, so nothing there blocks.
func openReadNonblock(path string) (*os.File, error) {
	return openFile(path, os.O_RDONLY, 0)
}

// checkOwner has nothing to check: Windows has no owner-and-mode bits;
// the hub's folders are in the user's profile, whose ACL admits the user
// alone, and the files the hub creates there inherit it.
func checkOwner(fs.FileInfo) error { return nil }
