package clientconfig

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "real.json")
	if err := os.WriteFile(real, []byte("old"), 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("target holds %q", b)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the old 0640", fi.Mode().Perm())
	}
	fresh := filepath.Join(dir, "fresh.yaml")
	if err := WriteFile(fresh, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("new file mode %v", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "no", "such", "dir.json"), nil, 0o600); err == nil {
		t.Error("write into a missing directory worked")
	}
}

func TestBackups(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "claude_desktop_config.json")
	os.WriteFile(p, []byte("v1"), 0o600)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b1, err := Backup(p, t0)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte("v2"), 0o600)
	b2, _ := Backup(p, t0) // the same second
	os.WriteFile(p, []byte("v3"), 0o600)
	b3, _ := Backup(p, t0.Add(time.Hour))
	if filepath.Base(b1) != "claude_desktop_config.json.mcp-hub-20260102-030405.bak" || filepath.Base(b2) != "claude_desktop_config.json.mcp-hub-20260102-030405-2.bak" {
		t.Errorf("names %s %s", b1, b2)
	}
	got, err := Backups(p)
	if err != nil || !slices.Equal(got, []string{b3, b2, b1}) {
		t.Errorf("backups %v, want newest first %v", got, []string{b3, b2, b1})
	}
	if b, _ := os.ReadFile(b2); string(b) != "v2" {
		t.Errorf("backup holds %q", b)
	}
	if fi, _ := os.Stat(b1); fi.Mode().Perm() != 0o600 {
		t.Errorf("backup mode %v", fi.Mode().Perm())
	}
}

// A disk that fills up during a backup: the write fails part way. Backup
// returns the error and leaves nothing behind, neither a backup nor a
// temporary file; the file itself is untouched.
func TestBackupCutShort(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "mcp.json")
	orig := []byte(`{"mcpServers": {"a": {"command": "a"}}}` + "\n")
	if err := os.WriteFile(p, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	full := func(f io.Writer, data []byte) error {
		if _, err := f.Write(data[:len(data)/2]); err != nil {
			return err
		}
		return syscall.ENOSPC
	}
	name, err := backup(p, time.Now(), full)
	if err == nil || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("backup on a full disk = %q, %v; want the ENOSPC error", name, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v; want only the file", entries)
	}
	if data, _ := os.ReadFile(p); string(data) != string(orig) {
		t.Errorf("the file changed: %q", data)
	}
}

// A restore reads the backup only if it is a whole config of the client.
func TestReadBackup(t *testing.T) {
	t.Parallel()
	good := `{"mcpServers": {"a": {"command": "a", "args": ["x"]}}, "theme": "dark"}` + "\n"
	tests := []struct {
		name    string
		backup  func(dir string) string // makes the backup, returns its path
		wantErr string
	}{
		{"whole", func(d string) string { return write(t, d, good) }, ""},
		{"cut short", func(d string) string { return write(t, d, good[:len(good)/2]) }, "not a whole cursor config"},
		{"cut at the last brace", func(d string) string { return write(t, d, good[:len(good)-2]) }, "not a whole cursor config"},
		{"empty", func(d string) string { return write(t, d, "") }, "is empty"},
		{"symlink", func(d string) string {
			target := write(t, t.TempDir(), good)
			link := filepath.Join(d, "mcp.json.mcp-hub-20260101-000000.bak")
			if err := os.Symlink(target, link); err != nil {
				t.Skipf("cannot make a symlink here: %v", err)
			}
			return link
		}, "symbolic link"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			loc := FileLocation("cursor", filepath.Join(dir, "mcp.json"), nil)
			data, err := ReadBackup(loc, tc.backup(dir))
			switch {
			case tc.wantErr == "" && (err != nil || string(data) != good):
				t.Errorf("ReadBackup = %q, %v; want the backup", data, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "unchanged")):
				t.Errorf("ReadBackup = %q, %v; want an error containing %q that says the file is unchanged", data, err, tc.wantErr)
			}
		})
	}
}

func write(t *testing.T, dir, content string) string {
	t.Helper()
	p := filepath.Join(dir, "mcp.json.mcp-hub-20260101-000000.bak")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// A symlink planted where the next backup goes: the backup is not written
// through it (the target stays as it was) but next to it.
func TestBackupNotThroughSymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(p, []byte(`{"mcpServers": {}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "elsewhere")
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Symlink(target, p+".mcp-hub-20260102-030405.bak"); err != nil {
		t.Skipf("cannot make a symlink here: %v", err)
	}
	name, err := Backup(p, t0)
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Base(name) != "mcp.json.mcp-hub-20260102-030405-2.bak" {
		t.Errorf("backup at %s", name)
	}
	if _, err := os.Lstat(target); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the link's target was created (%v)", err)
	}
}
