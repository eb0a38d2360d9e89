package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/atomicfile"
	"github.com/mcp-hub/mcp-hub/internal/nofollow"
)

// WriteFile replaces path with data atomically: a temporary file in the
// same directory is written, synced and renamed over it, so a reader (or a
// crash) sees the old file or the new one, never half of one. A symlink is
// followed: the file it points at is replaced and the link stays. An
// existing file keeps its permissions; a new one gets perm.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	target := path
	if p, err := filepath.EvalSymlinks(path); err == nil {
		target = p
	}
	if st, err := os.Stat(target); err == nil {
		perm = st.Mode().Perm()
	}
	if err := atomicfile.WriteFile(target, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func writeAll(w io.Writer, data []byte) error {
	_, err := w.Write(data) // a short write is an error (io.ErrShortWrite at least)
	return err
}

// Backup copies path to a timestamped file next to it
// (<name>.mcp-hub-20060102-150405.bak, UTC) and returns its path. The copy
// is written like WriteFile (temporary file, sync, rename): one cut short
// by a full disk is never left under a backup's name, and the error stops
// the caller before it changes path.
func Backup(path string, now time.Time) (string, error) {
	return backup(path, now, writeAll)
}

func backup(path string, now time.Time, write func(io.Writer, []byte) error) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("back up %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("back up %s: %w", path, err)
	}
	base := path + ".mcp-hub-" + now.UTC().Format("20060102-150405")
	name := base + ".bak"
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			break
		}
		name = fmt.Sprintf("%s-%d.bak", base, i)
	}
	if err := atomicfile.Write(name, st.Mode().Perm(), func(w io.Writer) error { return write(w, data) }); err != nil {
		return "", fmt.Errorf("back up %s: %w (nothing changed)", path, err)
	}
	return name, nil
}

// ReadBackup reads the backup at path of loc's file for a restore. It
// refuses, with the current file left alone, a backup that is not a whole
// config of the client: empty, not JSON(C) (a copy cut short, or damaged
// since), or a symbolic link (backups are files the hub wrote itself).
func ReadBackup(loc Location, path string) ([]byte, error) {
	data, err := nofollow.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the backup %s cannot be read (%w): not restoring it; %s is unchanged", path, err, loc.Path)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("the backup %s is empty: not restoring it; %s is unchanged (remove the backup to restore the one before it)", path, loc.Path)
	}
	if _, err := parseJSONC(data); err != nil {
		return nil, fmt.Errorf("the backup %s is not a whole %s config (%v; cut short or damaged): not restoring it; %s is unchanged (remove the backup to restore the one before it)", path, loc.Client, err, loc.Path)
	}
	return data, nil
}

// Backups lists path's backups, newest first.
func Backups(path string) ([]string, error) {
	names, err := filepath.Glob(globEscape(path) + ".mcp-hub-*.bak")
	if err != nil {
		return nil, err
	}
	// The timestamp sorts as text; "-2" (same second) after none.
	sort.Slice(names, func(i, j int) bool { return backupKey(names[i]) > backupKey(names[j]) })
	return names, nil
}

func backupKey(name string) string {
	stem := strings.TrimSuffix(name, ".bak")
	if i := strings.LastIndex(stem, ".mcp-hub-"); i >= 0 {
		stem = stem[i:]
	}
	stamp, n, ok := strings.Cut(strings.TrimPrefix(stem, ".mcp-hub-"), "-")
	if !ok {
		return stem
	}
	day, count, _ := strings.Cut(n, "-")
	c, _ := strconv.Atoi(count)
	return fmt.Sprintf("%s-%s-%04d", stamp, day, c)
}

func globEscape(p string) string {
	r := strings.NewReplacer("*", `\*`, "?", `\?`, "[", `\[`)
	if filepath.Separator == '\\' { // no escaping in Windows globs
		return p
	}
	return r.Replace(p)
}
