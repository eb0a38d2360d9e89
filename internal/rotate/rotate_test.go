package rotate

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestRotateBySize: lines are never split across files, the newest lines
// are in FILE, older ones in FILE.1, FILE.2; beyond the backups kept the
// oldest go.
func TestRotateBySize(t *testing.T) {
	for _, c := range []struct {
		name           string
		max            int64
		backups, lines int
		wantFiles      int
	}{
		{"no rotation under the limit", 1 << 20, 3, 50, 1},
		{"rotates and keeps backups", 200, 3, 50, 4},
		{"one backup", 200, 1, 50, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "logs", "audit.jsonl")
			f, err := Open(path, c.max, c.backups)
			if err != nil {
				t.Fatal(err)
			}
			for i := range c.lines {
				if _, err := fmt.Fprintf(f, "{\"n\":%03d,\"pad\":\"xxxxxxxxxxxxxxxxxxxx\"}\n", i); err != nil {
					t.Fatal(err)
				}
			}
			f.Close()
			var all []string
			files := 0
			for i := c.backups; i >= 0; i-- {
				name := path
				if i > 0 {
					name = Backup(path, i)
				}
				data, err := os.ReadFile(name)
				if os.IsNotExist(err) {
					continue
				}
				files++
				if int64(len(data)) > c.max && c.max > 0 && strings.Count(string(data), "\n") > 1 {
					t.Errorf("%s has %d bytes, over the %d limit", name, len(data), c.max)
				}
				sc := bufio.NewScanner(strings.NewReader(string(data)))
				for sc.Scan() {
					if !strings.HasPrefix(sc.Text(), "{") || !strings.HasSuffix(sc.Text(), "}") {
						t.Errorf("%s has a broken line %q", name, sc.Text())
					}
					all = append(all, sc.Text())
				}
			}
			if files != c.wantFiles {
				t.Errorf("%d files, want %d", files, c.wantFiles)
			}
			// What is kept is the newest lines, in order, ending with the last.
			last := fmt.Sprintf("{\"n\":%03d,", c.lines-1)
			if len(all) == 0 || !strings.HasPrefix(all[len(all)-1], last) {
				t.Fatalf("the last line written is not last: %v", all)
			}
			for i := 1; i < len(all); i++ {
				if all[i-1] >= all[i] {
					t.Errorf("lines out of order: %s before %s", all[i-1], all[i])
				}
			}
		})
	}
}

// TestRotateConcurrentWrites: concurrent writers never interleave within a line.
func TestRotateConcurrentWrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.log")
	f, err := Open(path, 4096, 50)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(f, "writer-%d line-%03d %s\n", w, i, strings.Repeat("z", 40))
			}
		})
	}
	wg.Wait()
	f.Close()
	total := 0
	matches, _ := filepath.Glob(path + "*")
	for _, m := range matches {
		data, _ := os.ReadFile(m)
		for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if !strings.HasPrefix(line, "writer-") || !strings.HasSuffix(line, strings.Repeat("z", 40)) {
				t.Errorf("%s: torn line %q", m, line)
			}
			total++
		}
	}
	if total != 800 {
		t.Errorf("%d lines kept, want 800", total)
	}
}

// TestOpenFails: a path that cannot be a file is an error at Open.
func TestOpenFails(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	os.WriteFile(notDir, nil, 0o600)
	if _, err := Open(filepath.Join(notDir, "audit.jsonl"), 0, 1); err == nil {
		t.Error("Open under a regular file succeeded")
	}
}
