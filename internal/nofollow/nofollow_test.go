package nofollow

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// symlink plants a link at dir/name pointing at target, or skips where
// the user may not make one (Windows without developer mode).
func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
}

func TestOpenFileRefusesSymlink(t *testing.T) {
	t.Parallel()
	dir, elsewhere := t.TempDir(), t.TempDir()
	missing := filepath.Join(elsewhere, "created")
	existing := filepath.Join(elsewhere, "existing")
	if err := os.WriteFile(existing, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, missing, filepath.Join(dir, "to-missing"))
	symlink(t, existing, filepath.Join(dir, "to-existing"))

	for _, name := range []string{"to-missing", "to-existing"} {
		for _, flag := range []int{os.O_RDWR | os.O_CREATE, os.O_WRONLY | os.O_CREATE | os.O_TRUNC, os.O_RDONLY} {
			f, err := OpenFile(filepath.Join(dir, name), flag, 0o600)
			if err == nil {
				f.Close()
			}
			if !errors.Is(err, ErrSymlink) {
				t.Errorf("OpenFile(%s, %#x) = %v; want ErrSymlink", name, flag, err)
			}
		}
		if _, err := ReadFile(filepath.Join(dir, name)); !errors.Is(err, ErrSymlink) {
			t.Errorf("ReadFile(%s) = %v; want ErrSymlink", name, err)
		}
	}
	if _, err := os.Lstat(missing); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link's target was created: %v", err)
	}
	if data, _ := os.ReadFile(existing); string(data) != "keep" {
		t.Errorf("the link's target was changed: %q", data)
	}

	// A plain file is opened and created as usual, with the mode asked.
	plain := filepath.Join(dir, "plain")
	f, err := OpenFile(plain, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("x")
	f.Close()
	if data, err := ReadFile(plain); err != nil || string(data) != "x" {
		t.Errorf("ReadFile(plain) = %q, %v", data, err)
	}
}
