package clientconfig

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
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

// TestReplaceWithRetry is the Windows rename rule, run here: busy errors
// are retried a bounded number of times, others are not.
func TestReplaceWithRetry(t *testing.T) {
	busy := errors.New("busy")
	for _, tc := range []struct {
		fails     int
		err       error
		wantCalls int
		wantErr   bool
	}{
		{0, nil, 1, false},
		{3, busy, 4, false},
		{100, busy, 8, true},
		{100, errors.New("no such file"), 1, true},
	} {
		calls := 0
		var slept time.Duration
		err := replaceWithRetry(func() error {
			calls++
			if calls <= tc.fails {
				return tc.err
			}
			return nil
		}, func(err error) bool { return err == busy }, func(d time.Duration) { slept += d })
		if calls != tc.wantCalls || (err != nil) != tc.wantErr || slept > 2*time.Second {
			t.Errorf("%d fails of %v: %d calls, err %v, slept %v", tc.fails, tc.err, calls, err, slept)
		}
	}
	for errno, want := range map[uintptr]bool{5: true, 32: true, 33: true, 2: false, 3: false, 183: false} {
		if windowsBusy(errno) != want {
			t.Errorf("windowsBusy(%d) = %v", errno, !want)
		}
	}
}
