//go:build !unix && !windows

package nofollow

import (
	"io/fs"
	"os"
)

// openFile checks with Lstat first: these platforms (js, wasip1, plan9)
// have no O_NOFOLLOW, and the hub's folders there have one user.
func openFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	if st, err := os.Lstat(path); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		return nil, symlinkError(path)
	}
	return os.OpenFile(path, flag, perm)
}

func openReadNonblock(path string) (*os.File, error) {
	return openFile(path, os.O_RDONLY, 0)
}

// checkOwner: these platforms have one user.
func checkOwner(fs.FileInfo) error { return nil }
