package pin

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/mcp-hub/mcp-hub/internal/atomicfile"
	"github.com/mcp-hub/mcp-hub/internal/filelock"
	"github.com/mcp-hub/mcp-hub/internal/nofollow"
)

// Backend keeps the pins' bytes (the pin file's JSON) for a Store.
type Backend interface {
	// Version is a cheap token of what is kept: it changes with every
	// write; "" when nothing is kept yet.
	Version(ctx context.Context) (string, error)
	// Load returns what is kept (nil when nothing) and its version.
	Load(ctx context.Context) (data []byte, version string, err error)
	// Update replaces what is kept with change(what is kept), atomically
	// against every other writer; change returning nil bytes and no error
	// leaves it as it is. It returns the version after.
	Update(ctx context.Context, change func(cur []byte) ([]byte, error)) (version string, err error)
	// String names where the pins are, for messages.
	String() string
}

// fileBackend is the pin file in the state folder: read without
// following a link planted at its path, changed under an exclusive lock
// on its lock file, replaced atomically (atomicfile).
type fileBackend struct{ path, lock string }

func (b *fileBackend) String() string { return b.path }

// Version is the file's modification time and size, from one Lstat.
func (b *fileBackend) Version(context.Context) (string, error) {
	st, err := os.Lstat(b.path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(st.ModTime().UnixNano(), 10) + "/" + strconv.FormatInt(st.Size(), 10), nil
}

func (b *fileBackend) Load(ctx context.Context) ([]byte, string, error) {
	v, err := b.Version(ctx)
	if err != nil || v == "" {
		return nil, "", err
	}
	data, err := nofollow.ReadOwned(b.path, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", nil
	}
	return data, v, err
}

func (b *fileBackend) Update(ctx context.Context, change func([]byte) ([]byte, error)) (string, error) {
	if err := os.MkdirAll(filepath.Dir(b.path), 0o700); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, LockWait)
	defer cancel()
	unlock, err := filelock.Lock(ctx, b.lock)
	if err != nil {
		return "", err
	}
	defer unlock()
	cur, v, err := b.Load(ctx)
	if err != nil {
		return "", err
	}
	next, err := change(cur)
	if err != nil || next == nil {
		return v, err
	}
	if err := atomicfile.WriteFile(b.path, next, 0o600); err != nil {
		return "", err
	}
	return b.Version(ctx)
}

// memoryBackend keeps the pins in memory.
type memoryBackend struct {
	mu      sync.Mutex
	data    []byte
	version int
}

func (b *memoryBackend) String() string { return "memory" }

func (b *memoryBackend) Version(context.Context) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.version == 0 {
		return "", nil
	}
	return strconv.Itoa(b.version), nil
}

func (b *memoryBackend) Load(ctx context.Context) ([]byte, string, error) {
	v, _ := b.Version(ctx)
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.data, v, nil
}

func (b *memoryBackend) Update(_ context.Context, change func([]byte) ([]byte, error)) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	next, err := change(b.data)
	if err == nil && next != nil {
		b.data = next
		b.version++
	}
	if b.version == 0 {
		return "", err
	}
	return strconv.Itoa(b.version), err
}
