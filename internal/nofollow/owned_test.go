package nofollow

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOwnedRefusesSymlinkFolderAndOversize(t *testing.T) {
	t.Parallel()
	dir, elsewhere := t.TempDir(), t.TempDir()
	target := filepath.Join(elsewhere, "target")
	if err := os.WriteFile(target, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	symlink(t, target, filepath.Join(dir, "link"))
	if data, err := ReadOwned(filepath.Join(dir, "link"), 1<<20); !errors.Is(err, ErrSymlink) || !Refused(err) || data != nil {
		t.Errorf("link: ReadOwned = %q, %v; want ErrSymlink", data, err)
	}

	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOwned(filepath.Join(dir, "folder"), 1<<20); !Refused(err) {
		t.Errorf("folder: ReadOwned = %v; want a refusal", err)
	}

	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, []byte(strings.Repeat("x", 101)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadOwned(big, 100); !errors.Is(err, ErrTooLarge) {
		t.Errorf("101 bytes, limit 100: ReadOwned = %v; want ErrTooLarge", err)
	} else if strings.Contains(err.Error(), "xxx") || !strings.Contains(err.Error(), big) {
		t.Errorf("the error must name the path and not the content: %v", err)
	}
	if data, err := ReadOwned(big, 101); err != nil || len(data) != 101 {
		t.Errorf("101 bytes, limit 101: ReadOwned = %d bytes, %v", len(data), err)
	}

	_, err := ReadOwned(filepath.Join(dir, "absent"), 100)
	if !errors.Is(err, fs.ErrNotExist) || Refused(err) {
		t.Errorf("absent: ReadOwned = %v; want ErrNotExist, not a refusal", err)
	}
}
