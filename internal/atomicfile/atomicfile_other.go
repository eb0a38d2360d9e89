//go:build !windows

package atomicfile

import "os"

const isWindows = false

// retryable: a POSIX rename is atomic and never waits on a reader.
func retryable(error) bool { return false }

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
