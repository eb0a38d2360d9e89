// Package rotate is an append-only log file that rotates by size: when a
// write would take the file past its limit, the file becomes FILE.1 (FILE.1
// becomes FILE.2, and so on up to the number of backups kept) and a new
// FILE is started.
//
// Each Write goes to the file in one write system call and nothing is
// buffered, so a crash loses at most the line being written. Rotation
// closes the file before renaming it, which Windows requires.
package rotate

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// File is a size-rotated append-only file. It is safe for concurrent use.
type File struct {
	path     string
	maxBytes int64
	backups  int

	mu   sync.Mutex
	f    *os.File
	size int64
}

// Open opens (or creates, 0600) path for appending. maxBytes <= 0 never
// rotates; backups is how many rotated files are kept (at least 1).
func Open(path string, maxBytes int64, backups int) (*File, error) {
	if backups < 1 {
		backups = 1
	}
	r := &File{path: path, maxBytes: maxBytes, backups: backups}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *File) open() error {
	if dir := filepath.Dir(r.path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	r.f, r.size = f, st.Size()
	return nil
}

// Write appends p in one write, rotating first if p would take the file
// past its limit. A single p larger than the limit is written whole.
func (r *File) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.maxBytes > 0 && r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			return 0, fmt.Errorf("rotate %s: %w", r.path, err)
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

// rotate shifts FILE.N-1 to FILE.N, ..., FILE to FILE.1 and starts afresh.
func (r *File) rotate() error {
	if err := r.f.Close(); err != nil {
		return err
	}
	r.f = nil
	os.Remove(Backup(r.path, r.backups))
	for i := r.backups - 1; i >= 1; i-- {
		os.Rename(Backup(r.path, i), Backup(r.path, i+1))
	}
	if err := os.Rename(r.path, Backup(r.path, 1)); err != nil && !os.IsNotExist(err) {
		// Keep writing to the same file rather than lose lines.
		if oerr := r.open(); oerr != nil {
			return oerr
		}
		return nil
	}
	return r.open()
}

// Backup is the name of the n-th rotated file of path.
func Backup(path string, n int) string { return fmt.Sprintf("%s.%d", path, n) }

// Close closes the file; later writes fail.
func (r *File) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
