//go:build unix

package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// TestNotesRefusesPlantedFile: the notes server reads NOTES_FILE only if
// it could have written it. A FIFO at the path answers at once with an
// error (its open used to wait for a writer forever), and so do a link
// and a file others may write; the link's target is never read.
func TestNotesRefusesPlantedFile(t *testing.T) {
	t.Parallel()
	elsewhere := filepath.Join(t.TempDir(), "other.json")
	if err := os.WriteFile(elsewhere, []byte(`{"next_id": 2, "notes": [{"id": "1", "text": "planted secret"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	plants := map[string]struct {
		plant func(path string) error
		want  string
	}{
		"fifo":    {func(p string) error { return syscall.Mkfifo(p, 0o600) }, "is not a regular file"},
		"symlink": {func(p string) error { return os.Symlink(elsewhere, p) }, "is a symbolic link"},
		"world-writable": {func(p string) error {
			if err := os.WriteFile(p, []byte(`{"next_id": 1}`), 0o600); err != nil {
				return err
			}
			return os.Chmod(p, 0o666)
		}, "is writable by group or others"},
	}
	for name, tc := range plants {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "notes.json")
			if err := tc.plant(path); err != nil {
				t.Skipf("cannot plant a %s here: %v", name, err)
			}
			cs, _ := connect(t, "notes", map[string]string{"NOTES_FILE": path})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_notes", Arguments: map[string]any{}})
			if ctx.Err() != nil {
				if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close() // let the stuck open return, so the test can end
				}
				t.Fatal("list_notes blocked on the planted file")
			}
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if !res.IsError || !strings.Contains(text, tc.want) || !strings.Contains(text, path) || strings.Contains(text, "planted secret") {
				t.Errorf("list_notes = error %v, %q; want an error naming %s and %q", res.IsError, text, path, tc.want)
			}
		})
	}
}

// TestNotesLockNotThroughLink: a link planted at the notes file's lock
// path is refused, and its target is not created.
func TestNotesLockNotThroughLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "notes.json")
	target := filepath.Join(t.TempDir(), "created-elsewhere")
	if err := os.Symlink(target, path+".lock"); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
	cs, _ := connect(t, "notes", map[string]string{"NOTES_FILE": path})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_notes", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "symbolic link") {
		t.Errorf("list_notes = error %v, %q; want the lock's link refused", res.IsError, text)
	}
	if _, err := os.Lstat(target); !os.IsNotExist(err) {
		t.Errorf("the link's target was created (%v)", err)
	}
}
