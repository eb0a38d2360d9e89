package builtin

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The notes builtin keeps notes in one JSON file. Every operation re-reads
// the file under a lock and writes it back atomically (temp file + rename),
// so several servers over the same file (one per hub session, or several hub
// processes) never lose an update and a crash never leaves a torn file.
// Notes are also MCP resources, note://<id>, listed from the file on each
// resources/list so the list is never stale.

const (
	noteScheme        = "note://"
	notesPageSize     = 100
	notesChangedProbe = "note://_changed" // placeholder toggled to emit resources/list_changed
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

func (n Note) uri() string { return noteScheme + n.ID }

// markdown renders a note for resources/read and read_note.
func (n Note) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", n.Title)
	if len(n.Tags) > 0 {
		fmt.Fprintf(&b, "Tags: %s\n", strings.Join(n.Tags, ", "))
	}
	fmt.Fprintf(&b, "ID: %s  Created: %s  Updated: %s\n\n%s\n", n.ID, n.Created.Format(time.RFC3339), n.Updated.Format(time.RFC3339), n.Body)
	return b.String()
}

// notesFile is the on-disk format.
type notesFile struct {
	NextID int    `json:"next_id"`
	Notes  []Note `json:"notes"`
}

// noteStore serialises access to one notes file: mu within the process
// (flock is per open file description, not per goroutine), lockFile across
// stores and processes.
type noteStore struct {
	path string
	mu   sync.Mutex
	now  func() time.Time
}

func (st *noteStore) load() (*notesFile, error) {
	data, err := os.ReadFile(st.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &notesFile{NextID: 1}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read notes file: %w", err)
	}
	var f notesFile
	if len(strings.TrimSpace(string(data))) > 0 {
		if err := json.Unmarshal(data, &f); err != nil {
			// Never overwrite a file we cannot parse: it may be the user's data.
			return nil, fmt.Errorf("notes file %s is not valid JSON (fix or move it): %w", st.path, err)
		}
	}
	for _, n := range f.Notes {
		if id, err := strconv.Atoi(n.ID); err == nil && id >= f.NextID {
			f.NextID = id + 1
		}
	}
	if f.NextID < 1 {
		f.NextID = 1
	}
	return &f, nil
}

func (st *noteStore) save(f *notesFile) error {
	dir := filepath.Dir(st.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create notes directory: %w", err)
	}
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return fmt.Errorf("encode notes: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".notes-*.tmp")
	if err != nil {
		return fmt.Errorf("write notes: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write notes: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write notes: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write notes: %w", err)
	}
	if err := os.Rename(tmp.Name(), st.path); err != nil {
		return fmt.Errorf("write notes: %w", err)
	}
	return nil
}

// view runs fn on a consistent snapshot of the file.
func (st *noteStore) view(fn func(*notesFile) error) error {
	return st.withLock(func() error {
		f, err := st.load()
		if err != nil {
			return err
		}
		return fn(f)
	})
}

// update runs fn on the file's contents and saves the result if fn succeeds.
func (st *noteStore) update(fn func(*notesFile) error) error {
	return st.withLock(func() error {
		f, err := st.load()
		if err != nil {
			return err
		}
		if err := fn(f); err != nil {
			return err
		}
		return st.save(f)
	})
}

func (st *noteStore) withLock(fn func() error) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(st.path), 0o700); err != nil {
		return fmt.Errorf("create notes directory: %w", err)
	}
	unlock, err := lockFile(st.path)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

func findNote(f *notesFile, id string) (int, error) {
	id = strings.TrimPrefix(strings.TrimSpace(id), noteScheme)
	for i, n := range f.Notes {
		if n.ID == id {
			return i, nil
		}
	}
	return -1, fmt.Errorf("no note with id %q (use list_notes or search_notes to find ids)", id)
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

// notesServer wires the store to one MCP server.
type notesServer struct {
	store  *noteStore
	server *mcp.Server
}

func newNotesServer(env map[string]string) (*mcp.Server, error) {
	path := env["NOTES_FILE"]
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil, fmt.Errorf("NOTES_FILE is not set and there is no user config directory: %w", err)
		}
		path = filepath.Join(dir, "mcp-hub", "notes.json")
	}
	ns := &notesServer{store: &noteStore{path: path, now: time.Now}}
	s := newServer("notes",
		"A personal notes store (file: "+path+"). Save things worth remembering with add_note; find them with search_notes or list_notes. "+
			"Notes are also readable as resources note://{id}.",
		&mcp.ServerOptions{
			CompletionHandler: ns.complete,
			// Subscriptions are tracked by the SDK; the handlers only accept them.
			SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
			UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		})
	ns.server = s

	mcp.AddTool(s, &mcp.Tool{
		Name:        "add_note",
		Description: "Save a new note (memo, reminder, snippet, idea) with a title, a body and optional tags to the local notes file. Returns the new note's id.",
		Annotations: &mcp.ToolAnnotations{Title: "Add note", OpenWorldHint: ptr(false)},
	}, ns.addNote)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_notes",
		Description: "List saved notes (id, title, tags, last update), newest first, optionally only those with a given tag.",
		Annotations: readOnly("List notes"),
	}, ns.listNotes)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "search_notes",
		Description: "Full-text search of saved notes: finds notes whose title, body or tags contain all the query words (case-insensitive), best matches first, with a snippet.",
		Annotations: readOnly("Search notes"),
	}, ns.searchNotes)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "read_note",
		Description: "Read the full text of a saved note by id.",
		Annotations: readOnly("Read note"),
	}, ns.readNote)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "update_note",
		Description: "Edit a saved note by id: replace its title, body or tags, or append text to its body. Fields left out are unchanged.",
		Annotations: &mcp.ToolAnnotations{Title: "Update note", DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, ns.updateNote)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "delete_note",
		Description: "Delete a saved note permanently by id.",
		Annotations: &mcp.ToolAnnotations{Title: "Delete note", DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)},
	}, ns.deleteNote)

	s.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "note",
		Title:       "Note",
		Description: "A saved note as Markdown, by id.",
		MIMEType:    "text/markdown",
		URITemplate: "note://{id}",
	}, ns.readResource)
	// resources/list is answered from the file (see listResources) rather than
	// from the SDK's registry, which would need re-syncing on every change
	// made by any server over the same file.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "resources/list" {
				return ns.listResources(req)
			}
			return next(ctx, method, req)
		}
	})

	s.AddPrompt(&mcp.Prompt{
		Name:        "summarize_notes",
		Title:       "Summarize notes",
		Description: "Summarize saved notes (all, or those with a tag) into key points and open action items.",
		Arguments: []*mcp.PromptArgument{
			{Name: "tag", Description: "only notes with this tag; empty for all notes"},
		},
	}, ns.summarizePrompt)
	return s, nil
}

// changed tells this server's sessions that the note list changed. The SDK
// emits resources/list_changed only when its own registry changes, so a
// placeholder is added and removed (the two changes are debounced into one
// notification); the placeholder never appears in resources/list because
// listResources answers from the file.
func (ns *notesServer) changed(ctx context.Context, updatedURI string) {
	ns.server.AddResource(&mcp.Resource{URI: notesChangedProbe, Name: "_changed"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return nil, mcp.ResourceNotFoundError(notesChangedProbe)
	})
	ns.server.RemoveResources(notesChangedProbe)
	if updatedURI != "" {
		_ = ns.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: updatedURI})
	}
}

type addNoteIn struct {
	Title string   `json:"title" jsonschema:"short title of the note"`
	Body  string   `json:"body,omitempty" jsonschema:"the note text (Markdown allowed)"`
	Tags  []string `json:"tags,omitempty" jsonschema:"optional tags, e.g. [\"work\", \"ideas\"]"`
}

func (ns *notesServer) addNote(ctx context.Context, _ *mcp.CallToolRequest, in addNoteIn) (*mcp.CallToolResult, Note, error) {
	title := strings.TrimSpace(in.Title)
	if title == "" {
		return nil, Note{}, fmt.Errorf("add_note: title is required")
	}
	var n Note
	err := ns.store.update(func(f *notesFile) error {
		now := ns.store.now().UTC()
		n = Note{ID: strconv.Itoa(f.NextID), Title: title, Body: in.Body, Tags: normTags(in.Tags), Created: now, Updated: now}
		f.NextID++
		f.Notes = append(f.Notes, n)
		return nil
	})
	if err != nil {
		return nil, Note{}, fmt.Errorf("add_note: %w", err)
	}
	ns.changed(ctx, "")
	return textResult("Saved note %s: %q (%s)", n.ID, n.Title, n.uri()), n, nil
}

// NoteSummary is a note without its body, for listings.
type NoteSummary struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Tags    []string `json:"tags,omitempty"`
	Updated string   `json:"updated"`
	Snippet string   `json:"snippet,omitempty" jsonschema:"text around the first match (search only)"`
}

type noteList struct {
	Notes []NoteSummary `json:"notes"`
	Total int           `json:"total" jsonschema:"number of matching notes before the limit"`
}

func summarize(n Note) NoteSummary {
	return NoteSummary{ID: n.ID, Title: n.Title, Tags: n.Tags, Updated: n.Updated.Format(time.RFC3339)}
}

func (l noteList) text(empty string) string {
	if len(l.Notes) == 0 {
		return empty
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d note(s)", l.Total)
	if l.Total > len(l.Notes) {
		fmt.Fprintf(&b, ", showing %d", len(l.Notes))
	}
	b.WriteString(":\n")
	for _, n := range l.Notes {
		fmt.Fprintf(&b, "- [%s] %s", n.ID, n.Title)
		if len(n.Tags) > 0 {
			fmt.Fprintf(&b, " (#%s)", strings.Join(n.Tags, " #"))
		}
		fmt.Fprintf(&b, " - updated %s", n.Updated)
		if n.Snippet != "" {
			fmt.Fprintf(&b, "\n  %s", n.Snippet)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

type listNotesIn struct {
	Tag   string `json:"tag,omitempty" jsonschema:"only list notes with this tag"`
	Limit int    `json:"limit,omitempty" jsonschema:"maximum number of notes to return (default 50)"`
}

func limitOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

func (ns *notesServer) listNotes(_ context.Context, _ *mcp.CallToolRequest, in listNotesIn) (*mcp.CallToolResult, noteList, error) {
	tag := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(in.Tag, "#")))
	var out noteList
	err := ns.store.view(func(f *notesFile) error {
		notes := slices.Clone(f.Notes)
		slices.SortStableFunc(notes, func(a, b Note) int { return b.Updated.Compare(a.Updated) })
		for _, n := range notes {
			if tag == "" || slices.Contains(n.Tags, tag) {
				out.Total++
				if len(out.Notes) < limitOr(in.Limit, 50) {
					out.Notes = append(out.Notes, summarize(n))
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, noteList{}, fmt.Errorf("list_notes: %w", err)
	}
	if out.Notes == nil {
		out.Notes = []NoteSummary{} // JSON [] rather than null
	}
	empty := "No notes yet."
	if tag != "" {
		empty = fmt.Sprintf("No notes tagged %q.", tag)
	}
	return textResult("%s", out.text(empty)), out, nil
}

type searchNotesIn struct {
	Query string `json:"query" jsonschema:"words to look for in note titles, bodies and tags"`
	Tag   string `json:"tag,omitempty" jsonschema:"only search notes with this tag"`
	Limit int    `json:"limit,omitempty" jsonschema:"maximum number of results (default 10)"`
}

func (ns *notesServer) searchNotes(_ context.Context, _ *mcp.CallToolRequest, in searchNotesIn) (*mcp.CallToolResult, noteList, error) {
	terms := strings.Fields(strings.ToLower(in.Query))
	if len(terms) == 0 {
		return nil, noteList{}, fmt.Errorf("search_notes: query is required")
	}
	tag := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(in.Tag, "#")))
	type hit struct {
		n     Note
		score int
	}
	var hits []hit
	err := ns.store.view(func(f *notesFile) error {
		for _, n := range f.Notes {
			if tag != "" && !slices.Contains(n.Tags, tag) {
				continue
			}
			title, body, tags := strings.ToLower(n.Title), strings.ToLower(n.Body), strings.Join(n.Tags, " ")
			score := 0
			for _, t := range terms {
				s := 3*strings.Count(title, t) + 2*strings.Count(tags, t) + strings.Count(body, t)
				if s == 0 {
					score = 0
					break
				}
				score += s
			}
			if score > 0 {
				hits = append(hits, hit{n, score})
			}
		}
		return nil
	})
	if err != nil {
		return nil, noteList{}, fmt.Errorf("search_notes: %w", err)
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		return cmp.Or(cmp.Compare(b.score, a.score), b.n.Updated.Compare(a.n.Updated))
	})
	out := noteList{Notes: []NoteSummary{}, Total: len(hits)}
	for _, h := range hits[:min(len(hits), limitOr(in.Limit, 10))] {
		s := summarize(h.n)
		s.Snippet = snippet(h.n.Body, terms[0])
		out.Notes = append(out.Notes, s)
	}
	return textResult("%s", out.text(fmt.Sprintf("No notes match %q.", in.Query))), out, nil
}

// snippet returns up to ~120 characters of body around the first occurrence
// of term, on one line.
func snippet(body, term string) string {
	r := []rune(strings.Join(strings.Fields(body), " "))
	lower := []rune(strings.ToLower(string(r)))
	i := strings.Index(string(lower), term)
	start := 0
	if i >= 0 {
		start = max(0, len([]rune(string(lower)[:i]))-40)
	}
	end := min(len(r), start+120)
	s := string(r[start:end])
	if start > 0 {
		s = "…" + s
	}
	if end < len(r) {
		s += "…"
	}
	return s
}

type noteIDIn struct {
	ID string `json:"id" jsonschema:"the note id (as shown by list_notes), or its note:// URI"`
}

func (ns *notesServer) get(id string) (Note, error) {
	var n Note
	err := ns.store.view(func(f *notesFile) error {
		i, err := findNote(f, id)
		if err != nil {
			return err
		}
		n = f.Notes[i]
		return nil
	})
	return n, err
}

func (ns *notesServer) readNote(_ context.Context, _ *mcp.CallToolRequest, in noteIDIn) (*mcp.CallToolResult, Note, error) {
	n, err := ns.get(in.ID)
	if err != nil {
		return nil, Note{}, fmt.Errorf("read_note: %w", err)
	}
	return textResult("%s", n.markdown()), n, nil
}

type updateNoteIn struct {
	ID         string    `json:"id" jsonschema:"the note id"`
	Title      *string   `json:"title,omitempty" jsonschema:"new title"`
	Body       *string   `json:"body,omitempty" jsonschema:"new body, replacing the old one"`
	AppendBody string    `json:"append_body,omitempty" jsonschema:"text to append to the body on a new line"`
	Tags       *[]string `json:"tags,omitempty" jsonschema:"new tags, replacing the old ones ([] removes all)"`
}

func (ns *notesServer) updateNote(ctx context.Context, _ *mcp.CallToolRequest, in updateNoteIn) (*mcp.CallToolResult, Note, error) {
	if in.Title == nil && in.Body == nil && in.AppendBody == "" && in.Tags == nil {
		return nil, Note{}, fmt.Errorf("update_note: nothing to change: give title, body, append_body or tags")
	}
	if in.Title != nil && strings.TrimSpace(*in.Title) == "" {
		return nil, Note{}, fmt.Errorf("update_note: title must not be empty")
	}
	var n Note
	err := ns.store.update(func(f *notesFile) error {
		i, err := findNote(f, in.ID)
		if err != nil {
			return err
		}
		p := &f.Notes[i]
		if in.Title != nil {
			p.Title = strings.TrimSpace(*in.Title)
		}
		if in.Body != nil {
			p.Body = *in.Body
		}
		if in.AppendBody != "" {
			if p.Body != "" && !strings.HasSuffix(p.Body, "\n") {
				p.Body += "\n"
			}
			p.Body += in.AppendBody
		}
		if in.Tags != nil {
			p.Tags = normTags(*in.Tags)
		}
		p.Updated = ns.store.now().UTC()
		n = *p
		return nil
	})
	if err != nil {
		return nil, Note{}, fmt.Errorf("update_note: %w", err)
	}
	ns.changed(ctx, n.uri())
	return textResult("Updated note %s: %q", n.ID, n.Title), n, nil
}

type deleteNoteOut struct {
	Deleted string `json:"deleted" jsonschema:"id of the deleted note"`
	Title   string `json:"title"`
}

func (ns *notesServer) deleteNote(ctx context.Context, _ *mcp.CallToolRequest, in noteIDIn) (*mcp.CallToolResult, deleteNoteOut, error) {
	var out deleteNoteOut
	err := ns.store.update(func(f *notesFile) error {
		i, err := findNote(f, in.ID)
		if err != nil {
			return err
		}
		out = deleteNoteOut{Deleted: f.Notes[i].ID, Title: f.Notes[i].Title}
		f.Notes = slices.Delete(f.Notes, i, i+1)
		return nil
	})
	if err != nil {
		return nil, deleteNoteOut{}, fmt.Errorf("delete_note: %w", err)
	}
	ns.changed(ctx, noteScheme+out.Deleted)
	return textResult("Deleted note %s: %q", out.Deleted, out.Title), out, nil
}

// listResources answers resources/list from the file, paginated by offset.
func (ns *notesServer) listResources(req mcp.Request) (*mcp.ListResourcesResult, error) {
	start := 0
	if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil && p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("resources/list: invalid cursor %q", p.Cursor)
		}
		start = n
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	err := ns.store.view(func(f *notesFile) error {
		for i := start; i < len(f.Notes) && len(res.Resources) < notesPageSize; i++ {
			n := f.Notes[i]
			desc := "Note"
			if len(n.Tags) > 0 {
				desc += " tagged " + strings.Join(n.Tags, ", ")
			}
			res.Resources = append(res.Resources, &mcp.Resource{
				URI: n.uri(), Name: "note-" + n.ID, Title: n.Title, Description: desc,
				MIMEType: "text/markdown", Size: int64(len(n.markdown())),
			})
		}
		if start+len(res.Resources) < len(f.Notes) {
			res.NextCursor = strconv.Itoa(start + len(res.Resources))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resources/list: %w", err)
	}
	return res, nil
}

func (ns *notesServer) readResource(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	n, err := ns.get(strings.TrimPrefix(uri, noteScheme))
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: n.markdown()}}}, nil
}

func (ns *notesServer) summarizePrompt(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	tag := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(req.Params.Arguments["tag"], "#")))
	var notes []Note
	err := ns.store.view(func(f *notesFile) error {
		for _, n := range f.Notes {
			if tag == "" || slices.Contains(n.Tags, tag) {
				notes = append(notes, n)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("summarize_notes: %w", err)
	}
	var b strings.Builder
	scope := "all my notes"
	if tag != "" {
		scope = fmt.Sprintf("my notes tagged %q", tag)
	}
	fmt.Fprintf(&b, "Summarize %s. Group related notes, list the key points, and end with any open action items or questions.\n\n", scope)
	if len(notes) == 0 {
		b.WriteString("(There are no matching notes.)\n")
	}
	for _, n := range notes {
		b.WriteString("---\n")
		b.WriteString(n.markdown())
	}
	return &mcp.GetPromptResult{
		Description: fmt.Sprintf("Summary request for %d note(s)", len(notes)),
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: b.String()}}},
	}, nil
}

// complete offers existing tags for the summarize_notes "tag" argument and
// existing ids for the note://{id} template.
func (ns *notesServer) complete(_ context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	prefix := strings.ToLower(req.Params.Argument.Value)
	var values []string
	err := ns.store.view(func(f *notesFile) error {
		for _, n := range f.Notes {
			switch {
			case req.Params.Ref.Type == "ref/prompt" && req.Params.Argument.Name == "tag":
				for _, t := range n.Tags {
					if strings.HasPrefix(t, prefix) && !slices.Contains(values, t) {
						values = append(values, t)
					}
				}
			case req.Params.Ref.Type == "ref/resource" && req.Params.Argument.Name == "id":
				if strings.HasPrefix(n.ID, prefix) {
					values = append(values, n.ID)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("completion: %w", err)
	}
	slices.Sort(values)
	total := len(values)
	if len(values) > 100 {
		values = values[:100] // the spec caps completion values at 100
	}
	if values == nil {
		values = []string{}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: values, Total: total, HasMore: total > len(values)}}, nil
}
