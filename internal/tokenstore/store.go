package tokenstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/nofollow"
)

// EnvStateDir overrides where mcp-hub keeps its state.
const EnvStateDir = "MCP_HUB_STATE_DIR"

// lockWait bounds how long a read or write waits for another process's
// lock: a refresh holds it for one round trip to a token endpoint.
const lockWait = 30 * time.Second

// Record is one server's OAuth state.
type Record struct {
	Server  string    `json:"server"`
	URL     string    `json:"url"`
	Client  *Client   `json:"client,omitempty"`
	Token   *Token    `json:"token,omitempty"`
	Updated time.Time `json:"updated"`
}

// Registration kinds: how the client id was obtained.
const (
	Dynamic       = "dynamic"       // RFC 7591 Dynamic Client Registration
	Preregistered = "preregistered" // client_id (and secret) from the config
	MetadataDoc   = "metadata_document"
)

// Client is the client the hub is registered as at the server's
// authorization server, and the endpoints it uses there.
type Client struct {
	ID           string `json:"client_id"`
	Secret       string `json:"client_secret,omitempty"`
	Registration string `json:"registration"`
	// AuthStyle is golang.org/x/oauth2's AuthStyle for the token endpoint
	// (0 auto-detect, 1 in the form, 2 HTTP Basic).
	AuthStyle   int      `json:"auth_style"`
	RedirectURL string   `json:"redirect_url,omitempty"`
	AuthURL     string   `json:"authorization_endpoint,omitempty"`
	TokenURL    string   `json:"token_endpoint"`
	Scopes      []string `json:"requested_scopes,omitempty"`
}

// Token is the current grant.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	Obtained     time.Time `json:"obtained"`
	Scopes       []string  `json:"scopes,omitempty"`
}

// Store is a folder of records.
type Store struct {
	dir string // the tokens folder itself
}

// DefaultDir is $MCP_HUB_STATE_DIR, else <user config dir>/mcp-hub.
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvStateDir); d != "" {
		return d, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no state folder: set %s (%w)", EnvStateDir, err)
	}
	return filepath.Join(base, "mcp-hub"), nil
}

// Open uses <stateDir>/tokens. Nothing is created until a record is
// written: the folder then gets mode 0700, and an existing one that others
// can read is made private again.
func Open(stateDir string) (*Store, error) {
	if stateDir == "" {
		return nil, errors.New("token store: no state folder")
	}
	return &Store{dir: filepath.Join(stateDir, "tokens")}, nil
}

// ensureDir creates the folder, private.
func (s *Store) ensureDir() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	st, err := os.Stat(s.dir)
	if err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	if !isWindows && st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(s.dir, 0o700); err != nil {
			return fmt.Errorf("token store: %s is readable by others and cannot be made private: %w", s.dir, err)
		}
	}
	return nil
}

// Dir is the folder the records are in.
func (s *Store) Dir() string { return s.dir }

// Path is the file that holds the record of server at url.
func (s *Store) Path(server, url string) string {
	return filepath.Join(s.dir, fileName(server, url)+".json")
}

// fileName is server's name made safe as a file name on every platform
// (Windows forbids <>:"/\|?* and names such as CON; the hash suffix keeps
// those from being the whole name), then a hash of name and URL, so that
// the same name at another URL is another file.
func fileName(server, url string) string {
	var b strings.Builder
	for _, r := range server {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 40 {
			break
		}
	}
	sum := sha256.Sum256([]byte(server + "\x00" + url))
	return b.String() + "-" + hex.EncodeToString(sum[:8])
}

// Load returns the record of server at url, or nil if there is none.
func (s *Store) Load(ctx context.Context, server, url string) (*Record, error) {
	if _, err := os.Stat(s.Path(server, url)); errors.Is(err, os.ErrNotExist) {
		return nil, nil // no lock needed, nor a folder made, to know that
	}
	unlock, err := s.lock(ctx, server, url)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.read(server, url)
}

// Update reads the record of server at url (nil if there is none), lets
// change make the new one, and writes it, all under the lock, so that a
// refresh in one process sees the token another process just wrote.
// change returning (nil, nil) leaves the file as it is.
func (s *Store) Update(ctx context.Context, server, url string, change func(*Record) (*Record, error)) (*Record, error) {
	unlock, err := s.lock(ctx, server, url)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cur, err := s.read(server, url)
	if err != nil {
		return nil, err
	}
	next, err := change(cur)
	if err != nil || next == nil {
		return cur, err
	}
	next.Server, next.URL, next.Updated = server, url, time.Now().UTC()
	if err := s.write(server, url, next); err != nil {
		return nil, err
	}
	return next, nil
}

// Delete removes the record of server at url; it reports whether there was one.
func (s *Store) Delete(ctx context.Context, server, url string) (bool, error) {
	if _, err := os.Stat(s.Path(server, url)); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	unlock, err := s.lock(ctx, server, url)
	if err != nil {
		return false, err
	}
	defer unlock()
	err = os.Remove(s.Path(server, url))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (s *Store) read(server, url string) (*Record, error) {
	path := s.Path(server, url)
	// A link planted at the path is refused, not read: records are files
	// this store writes itself (write replaces a link, never follows it).
	data, err := nofollow.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token store: server '%s': %w (remove it and log in again)", server, err)
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("token store: %s is damaged (%v): run `mcp-hub logout %s` and log in again", path, err, server)
	}
	if r.Server != server || r.URL != url {
		return nil, nil // not this server's: never hand it out
	}
	return &r, nil
}

// write replaces the file at once (WriteFileAtomic).
func (s *Store) write(server, url string, r *Record) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(s.Path(server, url), data); err != nil {
		return fmt.Errorf("token store: %w", err)
	}
	return nil
}

// lock takes the exclusive lock of one record, waiting up to lockWait.
func (s *Store) lock(ctx context.Context, server, url string) (unlock func(), err error) {
	if err := s.ensureDir(); err != nil {
		return nil, err
	}
	unlock, err = LockFile(ctx, filepath.Join(s.dir, fileName(server, url)+".lock"), lockWait)
	if err != nil {
		return nil, fmt.Errorf("token store: server '%s': %w", server, err)
	}
	return unlock, nil
}
