//go:build !windows

package clientconfig

import "os"

// replaceFile renames src over dst: atomic on POSIX file systems.
func replaceFile(src, dst string) error { return os.Rename(src, dst) }

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
