package builtin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/internal/atomicfile"
	"github.com/mcp-hub/mcp-hub/internal/filelock"
	"github.com/mcp-hub/mcp-hub/internal/nofollow"
)

// The notes store keeps notes in one JSON file. Every operation reads the
// file under a lock and a change writes it back atomically (temp file +
// rename), so several servers over the same file (one per hub, or several
// hub processes) never lose an update and a crash never leaves a torn file.
//
// Reading does not mean parsing: the store keeps the last file it parsed or
// wrote, and reuses it while the file on disk is the same one. Every save
// is a new file renamed into place with a fresh random "rev" at its start,
// so "the same" is checked cheaply and safely: same file identity, size and
// modification time, and the same rev in its first bytes. Paging through
// resources/list or searching costs a stat and a small read, not a parse.

// Limits of the store. A write past one fails with an error naming it and
// the fix; a file over maxNotesFileBytes is never read.
const (
	maxNotes          = 10_000
	maxNoteTitle      = 200       // characters
	maxNoteBody       = 100 << 10 // bytes
	maxNoteTags       = 20
	maxNoteTag        = 50 // characters
	maxNotesFileBytes = 16 << 20
)

// Note is one stored note.
type Note struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Body    string    `json:"body"`
	Tags    []string  `json:"tags,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

// notesFile is the on-disk format. Rev comes first so that it can be read
// without parsing the rest.
type notesFile struct {
	Rev    string `json:"rev,omitempty"`
	NextID int    `json:"next_id"`
	Notes  []Note `json:"notes"`

	// lower holds each note's title, body and tags lower-cased for
	// search_notes, built on the first search of this parse.
	lower []noteText
}

type noteText struct{ title, body, tags string }

// searchText returns the lower-cased text of every note, index for index.
func (f *notesFile) searchText() []noteText {
	if f.lower == nil {
		f.lower = make([]noteText, len(f.Notes))
		for i, n := range f.Notes {
			f.lower[i] = noteText{strings.ToLower(n.Title), strings.ToLower(n.Body), strings.Join(n.Tags, " ")}
		}
	}
	return f.lower
}

// clone is a copy that update's fn may change without touching the cached
// parse (a failed save must leave the cache as the file is).
func (f *notesFile) clone() *notesFile {
	return &notesFile{NextID: f.NextID, Notes: slices.Clone(f.Notes)}
}

// noteStore serialises access to one notes file: sem within the process
// (a file lock belongs to an open file, not a goroutine), filelock across
// stores and processes. Waiting for either honours the call's context.
type noteStore struct {
	path     string
	now      func() time.Time
	maxBytes int           // file size limit: maxNotesFileBytes (tests lower it)
	maxNotes int           // note count limit: maxNotes (tests lower it)
	sem      chan struct{} // one slot

	// Guarded by sem: the last file parsed or written, and its stat; and
	// how many times the file was parsed (tests check the cache with it).
	cache     *notesFile
	cacheStat fs.FileInfo
	parses    int
}

func newNoteStore(path string) *noteStore {
	return &noteStore{path: path, now: time.Now, maxBytes: maxNotesFileBytes, maxNotes: maxNotes, sem: make(chan struct{}, 1)}
}

// view runs fn on a consistent snapshot of the file. fn must not change it.
func (st *noteStore) view(ctx context.Context, fn func(*notesFile) error) error {
	return st.withLock(ctx, func() error {
		f, err := st.load()
		if err != nil {
			return err
		}
		return fn(f)
	})
}

// update runs fn on a copy of the file's contents and saves the result if
// fn succeeds.
func (st *noteStore) update(ctx context.Context, fn func(*notesFile) error) error {
	return st.withLock(ctx, func() error {
		f, err := st.load()
		if err != nil {
			return err
		}
		f = f.clone()
		if err := fn(f); err != nil {
			return err
		}
		return st.save(f)
	})
}

func (st *noteStore) withLock(ctx context.Context, fn func() error) error {
	select {
	case st.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("waiting for the notes file: %w", ctx.Err())
	}
	defer func() { <-st.sem }()
	if err := os.MkdirAll(filepath.Dir(st.path), 0o700); err != nil {
		return fmt.Errorf("create notes directory: %w", err)
	}
	unlock, err := filelock.Lock(ctx, st.path+".lock")
	if err != nil {
		return fmt.Errorf("notes file: %w", err)
	}
	defer unlock()
	return fn()
}

// load returns the file's contents, from the cache while the file has not
// changed. The caller holds the lock.
func (st *noteStore) load() (*notesFile, error) {
	tooBig := func(size int64) error {
		return fmt.Errorf("notes file %s is %s, over the %s limit: move notes out of it, or point NOTES_FILE at a new file",
			st.path, byteSize(int(size)), byteSize(st.maxBytes))
	}
	// Only a file the hub could have written is read (nofollow.OpenOwned):
	// not a link, a FIFO (whose open would hang the server), another
	// user's file or one others may write.
	file, info, err := nofollow.OpenOwned(st.path, int64(st.maxBytes))
	if errors.Is(err, fs.ErrNotExist) {
		st.cache, st.cacheStat = nil, nil
		return &notesFile{NextID: 1}, nil
	}
	if errors.Is(err, nofollow.ErrTooLarge) {
		if fi, lerr := os.Lstat(st.path); lerr == nil {
			return nil, tooBig(fi.Size())
		}
	}
	if nofollow.Refused(err) {
		return nil, fmt.Errorf("notes file refused: %w (the notes server reads only a regular file of its own user that nobody else may write: fix or move it)", err)
	}
	if err != nil {
		return nil, fmt.Errorf("read notes file: %w", err)
	}
	defer file.Close()
	if st.cache != nil && st.cache.Rev != "" && sameStat(st.cacheStat, info) {
		if rev, err := readRev(file); err == nil && rev == st.cache.Rev {
			return st.cache, nil
		}
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("read notes file: %w", err)
		}
	}
	// Bounded again while reading: a device or a file that grows has no
	// meaningful size.
	data, err := io.ReadAll(io.LimitReader(file, int64(st.maxBytes)+1))
	if err != nil {
		return nil, fmt.Errorf("read notes file: %w", err)
	}
	if len(data) > st.maxBytes {
		return nil, tooBig(int64(len(data)))
	}
	st.parses++
	f := &notesFile{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, f); err != nil {
			// Never overwrite a file we cannot parse: it may be the user's data.
			return nil, fmt.Errorf("notes file %s is not valid JSON (fix or move it): %w", st.path, err)
		}
	}
	for _, n := range f.Notes {
		// A hand-edited id near the top of int must not wrap NextID.
		if id, err := strconv.Atoi(n.ID); err == nil && id >= f.NextID && id < maxNoteID {
			f.NextID = id + 1
		}
	}
	if f.NextID < 1 {
		f.NextID = 1
	}
	st.cache, st.cacheStat = f, info
	return f, nil
}

// maxNoteID bounds the ids the store hands out; past it (a hand-edited
// file), add_note looks for a free id instead.
const maxNoteID = 1 << 53

// newID returns an id no note of f has, and advances f.NextID.
func (f *notesFile) newID() string {
	used := make(map[string]bool, len(f.Notes))
	for _, n := range f.Notes {
		used[n.ID] = true
	}
	for {
		if f.NextID < 1 || f.NextID >= maxNoteID {
			f.NextID = 1
		}
		id := strconv.Itoa(f.NextID)
		f.NextID++
		if !used[id] { // ends: at most maxNotes ids are used
			return id
		}
	}
}

func sameStat(a, b fs.FileInfo) bool {
	return a != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// readRev reads the "rev" member at the start of a notes file.
func readRev(r io.Reader) (string, error) {
	dec := json.NewDecoder(io.LimitReader(r, 4096))
	for _, want := range []any{json.Delim('{'), "rev"} {
		if tok, err := dec.Token(); err != nil || tok != want {
			return "", errors.New("no rev")
		}
	}
	tok, err := dec.Token()
	rev, ok := tok.(string)
	if err != nil || !ok {
		return "", errors.New("no rev")
	}
	return rev, nil
}

// save writes f atomically with a new rev, and caches it. The caller holds
// the lock.
func (st *noteStore) save(f *notesFile) error {
	dir := filepath.Dir(st.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create notes directory: %w", err)
	}
	var rev [8]byte
	_, _ = rand.Read(rev[:]) // never fails (crypto/rand)
	f.Rev = hex.EncodeToString(rev[:])
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep <, > and & as they are: smaller, and readable
	enc.SetIndent("", "  ")
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("encode notes: %w", err)
	}
	if buf.Len() > st.maxBytes {
		return fmt.Errorf("the notes file would grow to %s, over its %s limit: delete or shorten notes, or point NOTES_FILE at a new file",
			byteSize(buf.Len()), byteSize(st.maxBytes))
	}
	if err := atomicfile.WriteFile(st.path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("write notes: %w", err)
	}
	if info, err := os.Stat(st.path); err == nil {
		f.lower = nil
		st.cache, st.cacheStat = f, info
	} else {
		st.cache, st.cacheStat = nil, nil
	}
	return nil
}

func findNote(f *notesFile, id string) (int, error) {
	id = strings.TrimPrefix(strings.TrimSpace(id), noteScheme)
	for i, n := range f.Notes {
		if n.ID == id {
			return i, nil
		}
	}
	return -1, fmt.Errorf("no note with id %s (use list_notes or search_notes to find ids)", quote(id))
}

// checkTitle returns the trimmed title, or an error past maxNoteTitle.
func checkTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	if title == "" {
		return "", errors.New("title is required")
	}
	if n := utf8.RuneCountInString(title); n > maxNoteTitle {
		return "", fmt.Errorf("the title is %d characters, at most %d: keep it short and put the rest in the body", n, maxNoteTitle)
	}
	return title, nil
}

func checkBody(size int) error {
	if size > maxNoteBody {
		return fmt.Errorf("the body would be %s, at most %s per note: split the text into several notes", byteSize(size), byteSize(maxNoteBody))
	}
	return nil
}

// checkTags normalises tags (normTags) within the limits. The count is
// checked first: normalising is quadratic in it.
func checkTags(tags []string) ([]string, error) {
	if len(tags) > maxNoteTags {
		return nil, fmt.Errorf("%d tags, at most %d per note", len(tags), maxNoteTags)
	}
	out := normTags(tags)
	for _, t := range out {
		if utf8.RuneCountInString(t) > maxNoteTag {
			return nil, fmt.Errorf("tag %s is longer than %d characters", quote(t), maxNoteTag)
		}
	}
	return out, nil
}

// normTags lower-cases, trims and de-duplicates tags, keeping their order.
func normTags(tags []string) []string {
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "#")))
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
