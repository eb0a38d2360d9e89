//go:build unix

package gateway

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHashKeyFileFIFO: a FIFO planted where the generated hash key lives
// is refused at once, not waited on: its open used to block the hub's
// start until a writer came, and SIGTERM could not end it.
func TestHashKeyFileFIFO(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), HashKeyFile)
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := loadOrCreateKeyFile(path); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("loadOrCreateKeyFile = %v; want a refusal of the FIFO", err)
		}
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close() // let the stuck open return, so the test can end
		}
		<-done
		t.Fatal("loading the hash key blocked on a FIFO")
	}
}
