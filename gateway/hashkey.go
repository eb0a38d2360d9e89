package gateway

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/nofollow"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

// Keyed hashes.
//
// A hash of a guessable value (a tool call's arguments, a static token
// without a name) is an HMAC-SHA256 under the deployment's hash key, never
// a plain SHA-256: whoever reads the audit log or the session store cannot
// test guesses against it without the key.
//
// The key is hash_key when the config sets it; else the hub generates one
// and keeps it in HashKeyFile under its state folder ($MCP_HUB_STATE_DIR,
// else <user config dir>/mcp-hub), so hashes stay comparable across
// restarts. Replicas sharing a session_store compare principal ids, so they
// must share the key: there hash_key is required (a config error without
// it, package config), and no key is ever kept in the store, where it
// would sit next to the ids it is meant to protect.

// HashKeyFile is the generated key's file name in the state folder.
const HashKeyFile = "hash_key"

// hashKeyBytes is the size of a generated key.
const hashKeyBytes = 32

// keyedHash computes HMAC-SHA256 under the deployment's hash key.
type keyedHash struct{ key []byte }

// hex is the HMAC-SHA256 of b under the key, hex-encoded.
func (k *keyedHash) hex(b []byte) string {
	m := hmac.New(sha256.New, k.key)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// needsHashKey reports whether cfg hashes anything: an audit log, or a
// static token without a name.
func needsHashKey(cfg *config.Config) bool {
	if cfg.HashKey != "" || cfg.Audit.File != "" {
		return true
	}
	return authNeedsHashKey(cfg.Auth)
}

func authNeedsHashKey(a config.Auth) bool {
	for _, t := range a.Tokens {
		if t.Name == "" && t.Value != "" {
			return true
		}
	}
	return false
}

// resolveHashKey is the key of cfg: hash_key, else the one kept in
// stateDir (generated there the first time).
func resolveHashKey(cfg *config.Config, stateDir string) (*keyedHash, error) {
	if cfg.HashKey != "" {
		return &keyedHash{key: []byte(cfg.HashKey)}, nil
	}
	if stateDir == "" {
		return nil, errors.New("hash_key: no state folder to keep a generated key in: set hash_key, or MCP_HUB_STATE_DIR")
	}
	key, err := loadOrCreateKeyFile(filepath.Join(stateDir, HashKeyFile))
	if err != nil {
		return nil, fmt.Errorf("hash_key: %w (or set hash_key in the config)", err)
	}
	return &keyedHash{key: key}, nil
}

// loadOrCreateKeyFile reads the key kept at path, or makes one. The file is
// never followed through a symbolic link, and a new one appears whole
// (written to a temporary file, then hard-linked into place, which fails
// rather than replace whatever got there first), mode 0600.
func loadOrCreateKeyFile(path string) ([]byte, error) {
	key, err := readKeyFile(path)
	if !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	raw := make([]byte, hashKeyBytes)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(dir, HashKeyFile+".new-*") // O_EXCL, 0600
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(raw) + "\n")
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return nil, werr
	}
	// link(2) does not follow or replace an existing name: another
	// process that made the key first wins, and its key is read back.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	return readKeyFile(path)
}

// readKeyFile reads a key file: a regular file, not a link, that only its
// owner may read, holding the hex of hashKeyBytes random bytes.
func readKeyFile(path string) ([]byte, error) {
	f, st, err := nofollow.OpenOwned(path, 4*hashKeyBytes)
	if nofollow.Refused(err) {
		return nil, fmt.Errorf("%w: remove it to have a new key made", err)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read by others (mode %o): chmod 600 it", path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 4*hashKeyBytes))
	if err != nil {
		return nil, err
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != hashKeyBytes {
		return nil, fmt.Errorf("%s does not hold a key (%d hex-encoded random bytes): remove it to have a new one made", path, hashKeyBytes)
	}
	return key, nil
}

// keyFor returns the hub's hash key, resolving it from cfg the first time
// it is needed; nil when it is not needed and not resolved yet. Once
// resolved it stays for the life of the hub: principal ids and audit
// hashes made with it must stay comparable (a changed hash_key needs a
// restart).
func (g *Gateway) keyFor(cfg *config.Config, needed bool) (*keyedHash, error) {
	if k := g.hashKey.Load(); k != nil || !needed {
		return k, nil
	}
	dir := g.stateDir
	if dir == "" && cfg.HashKey == "" {
		var err error
		if dir, err = tokenstore.DefaultDir(); err != nil {
			return nil, &config.Error{Path: cfg.Path, Msg: fmt.Sprintf("hash_key: %v", err)}
		}
	}
	k, err := resolveHashKey(cfg, dir)
	if err != nil {
		return nil, &config.Error{Path: cfg.Path, Msg: err.Error()}
	}
	g.hashKey.CompareAndSwap(nil, k)
	return g.hashKey.Load(), nil
}
