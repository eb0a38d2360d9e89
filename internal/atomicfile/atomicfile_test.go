package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, content := range []string{"first", "second, longer than the first", ""} {
		if err := WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read %q, %v; want %q", got, err, content)
		}
	}
	if runtime.GOOS != "windows" {
		st, _ := os.Stat(path)
		if st.Mode().Perm() != 0o600 {
			t.Errorf("mode %v, want 0600", st.Mode().Perm())
		}
	}
	assertOnly(t, dir, "f.json")
}

func TestWriteFailureLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, 0o644, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want boom", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("file is %q after a failed write, want old", got)
	}
	assertOnly(t, dir, "f")
}

func TestWriteReplacesALinkInsteadOfFollowingIt(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	os.WriteFile(victim, []byte("keep"), 0o600)
	link := filepath.Join(dir, "state")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(victim); string(got) != "keep" {
		t.Errorf("the link's target was written: %q", got)
	}
	if st, _ := os.Lstat(link); st.Mode()&os.ModeSymlink != 0 {
		t.Error("the link is still there")
	}
}

func TestRenameRetrying(t *testing.T) {
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
		err := renameRetrying(func() error {
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

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	if len(entries) != len(names) {
		var got []string
		for _, e := range entries {
			got = append(got, e.Name())
		}
		t.Errorf("folder holds %v, want %v (a temporary file left behind?)", got, names)
	}
}
