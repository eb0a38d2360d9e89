//go:build unix

package tokenstore

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPlantedRecordRefused: a FIFO, a file others may write, or an
// oversize file at a record's path is not read: Load fails at once,
// naming the file and why.
func TestPlantedRecordRefused(t *testing.T) {
	t.Parallel()
	const server, url = "svc", "https://svc.example/mcp"
	record := `{"server":"svc","url":"https://svc.example/mcp","token":{"access_token":"planted"}}`
	plants := map[string]struct {
		plant func(path string) error
		want  string
	}{
		"fifo": {func(p string) error { return syscall.Mkfifo(p, 0o600) }, "is not a regular file"},
		"world-writable": {func(p string) error {
			if err := os.WriteFile(p, []byte(record), 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o666)
		}, "is writable by group or others"},
		"oversize": {func(p string) error {
			if err := os.WriteFile(p, []byte(record), 0o600); err != nil {
				return err
			}
			return os.Truncate(p, MaxRecordBytes+1)
		}, "is larger than its limit"},
	}
	for name, tc := range plants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, _ := Open(t.TempDir())
			if err := s.ensureDir(); err != nil {
				t.Fatal(err)
			}
			path := s.Path(server, url)
			if err := tc.plant(path); err != nil {
				t.Skipf("cannot plant a %s here: %v", name, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			type result struct {
				r   *Record
				err error
			}
			done := make(chan result, 1)
			go func() { r, err := s.Load(ctx, server, url); done <- result{r, err} }()
			select {
			case res := <-done:
				if res.err == nil || !strings.Contains(res.err.Error(), tc.want) || !strings.Contains(res.err.Error(), path) || strings.Contains(res.err.Error(), "planted") {
					t.Errorf("Load = %+v, %v; want an error naming %s and %q", res.r, res.err, path, tc.want)
				}
			case <-ctx.Done():
				if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close() // let the stuck open return, so the test can end
				}
				<-done
				t.Fatal("Load blocked on the planted file")
			}
		})
	}
}
