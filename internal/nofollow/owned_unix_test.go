//go:build unix

package nofollow

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOwnedRefusesFIFO: a FIFO planted at the path is refused at once;
// without O_NONBLOCK the open waits for a writer that never comes.
func TestOwnedRefusesFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cache")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	done := make(chan error, 2)
	go func() { _, err := ReadOwned(path, 1<<20); done <- err }()
	go func() { _, err := ReadFile(path); done <- err }()
	for range 2 {
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || !Refused(err) {
				t.Errorf("read of a FIFO = %v; want ErrNotRegular", err)
			}
		case <-time.After(10 * time.Second):
			// Unblock the stuck open so the test ends: open the write side.
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			t.Fatal("reading a FIFO blocked")
		}
	}
}

func TestOwnedRefusesLooseModeAndOtherOwner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "cache")
	if err := os.WriteFile(path, []byte("planted"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o666, 0o620, 0o602} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		data, err := ReadOwned(path, 1<<20)
		if !errors.Is(err, ErrWritable) || !Refused(err) || data != nil {
			t.Errorf("mode %#o: ReadOwned = %q, %v; want ErrWritable", mode, data, err)
		}
	}
	// Readable by others is the caller's business (a cache is not secret).
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadOwned(path, 1<<20); err != nil || string(data) != "planted" {
		t.Errorf("mode 0644: ReadOwned = %q, %v", data, err)
	}

	if os.Geteuid() != 0 {
		return // only root can give a file away
	}
	if err := os.Chown(path, 65534, 65534); err != nil {
		t.Skipf("chown: %v", err)
	}
	if _, err := ReadOwned(path, 1<<20); !errors.Is(err, ErrNotOwned) {
		t.Errorf("another user's file: ReadOwned = %v; want ErrNotOwned", err)
	}
}
