//go:build unix

package embed_test

import (
	"os"
	"syscall"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// unblockFIFO opens the write side of a FIFO, so that a reader stuck in
// its open returns (and the test can end).
func unblockFIFO(path string) {
	if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		w.Close()
	}
}
