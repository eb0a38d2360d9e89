package builtin

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// The notes builtin serves the notes store (notes_store.go) as tools, as
// MCP resources note://<id> (listed from the file on each resources/list, so
// the list is never stale), and as the summarize_notes prompt.

const (
	noteScheme        = "note://"
	notesPageSize     = 100
	notesChangedProbe = "note://_changed" // placeholder toggled to emit resources/list_changed
	// maxListLimit caps list_notes' and search_notes' limit.
	maxListLimit = 1000
	// maxQueryTerms bounds search_notes' words: each costs a pass over
	// every note.
	maxQueryTerms = 32
	// maxPromptNotes bounds the notes text summarize_notes puts in its
	// prompt.
	maxPromptNotes = 1 << 20
	// notifyInterval is the most often a burst of changes is announced.
	notifyInterval = 50 * time.Millisecond
)

func (n Note) uri() string { return noteScheme + n.ID }

// markdown renders a note for resources/read and read_note.
func (n Note) markdown() string {
	var b strings.Builder
	n.writeMarkdown(&b)
	return b.String()
}

// markdownSize is len(n.markdown()), without building it.
func (n Note) markdownSize() int {
	var c byteCounter
	n.writeMarkdown(&c)
	return int(c)
}

func (n Note) writeMarkdown(w io.Writer) {
	for _, s := range []string{"# ", n.Title, "\n\n"} {
		io.WriteString(w, s)
	}
	if len(n.Tags) > 0 {
		io.WriteString(w, "Tags: ")
		for i, t := range n.Tags {
			if i > 0 {
				io.WriteString(w, ", ")
			}
			io.WriteString(w, t)
		}
		io.WriteString(w, "\n")
	}
	for _, s := range []string{"ID: ", n.ID, "  Created: ", n.Created.Format(time.RFC3339), "  Updated: ", n.Updated.Format(time.RFC3339), "\n\n", n.Body, "\n"} {
		io.WriteString(w, s)
	}
}

type byteCounter int

func (c *byteCounter) Write(p []byte) (int, error) { *c += byteCounter(len(p)); return len(p), nil }

// notesServer wires the store to one MCP server.
type notesServer struct {
	store  *noteStore
	server *mcp.Server
	notify *notifier
}

func newNotesServer(env map[string]string, opts Options) (*mcp.Server, error) {
	path := env["NOTES_FILE"]
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return nil, fmt.Errorf("NOTES_FILE is not set and there is no user config directory: %w", err)
		}
		path = filepath.Join(dir, "mcp-hub", "notes.json")
	}
	ns := &notesServer{store: newNoteStore(path)}
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
	ns.notify = &notifier{server: s, log: opts.Logger, updated: map[string]bool{}}

	addTool(s, "notes", opts, &mcp.Tool{
		Name:        "add_note",
		Description: "Save a new note (memo, reminder, snippet, idea) with a title, a body and optional tags to the local notes file. Returns the new note's id.",
		Annotations: &mcp.ToolAnnotations{Title: "Add note", OpenWorldHint: ptr(false)},
	}, ns.addNote)
	addTool(s, "notes", opts, &mcp.Tool{
		Name:        "list_notes",
		Description: "List saved notes (id, title, tags, last update), newest first, optionally only those with a given tag.",
		Annotations: readOnly("List notes"),
	}, ns.listNotes)
	addTool(s, "notes", opts, &mcp.Tool{
		Name:        "search_notes",
		Description: "Full-text search of saved notes: finds notes whose title, body or tags contain all the query words (case-insensitive), best matches first, with a snippet.",
		Annotations: readOnly("Search notes"),
	}, ns.searchNotes)
	addTool(s, "notes", opts, &mcp.Tool{
		Name:        "read_note",
		Description: "Read the full text of a saved note by id.",
		Annotations: readOnly("Read note"),
	}, ns.readNote)
	addTool(s, "notes", opts, &mcp.Tool{
		Name:        "update_note",
		Description: "Edit a saved note by id: replace its title, body or tags, or append text to its body. Fields left out are unchanged.",
		Annotations: &mcp.ToolAnnotations{Title: "Update note", DestructiveHint: ptr(true), OpenWorldHint: ptr(false)},
	}, ns.updateNote)
	addTool(s, "notes", opts, &mcp.Tool{
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
				return ns.listResources(ctx, req)
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

// notifier tells the server's sessions that notes changed, coalescing
// bursts: however many changes arrive, a resources/list_changed (and a
// resources/updated per changed note, to its subscribers) goes out at most
// once per notifyInterval, notifyInterval after the first change of the
// burst. The go-sdk's own debounce is no bound: it postpones the
// notification while changes keep coming.
type notifier struct {
	server *mcp.Server
	log    *slog.Logger

	mu      sync.Mutex
	pending bool            // a flush is scheduled
	list    bool            // the note list changed
	updated map[string]bool // notes changed
}

func (n *notifier) changed(updatedURI string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.list = true
	if updatedURI != "" {
		n.updated[updatedURI] = true
	}
	if !n.pending {
		n.pending = true
		time.AfterFunc(notifyInterval, n.flush)
	}
}

func (n *notifier) flush() {
	// A timer's goroutine is outside the server's boundary: a panic here
	// would end the process.
	defer func() {
		if v := recover(); v != nil {
			n.log.Error("builtin panicked while sending notes notifications", "server", "notes", "panic", fmt.Sprint(v))
		}
	}()
	n.mu.Lock()
	list, updated := n.list, n.updated
	n.list, n.updated, n.pending = false, map[string]bool{}, false
	n.mu.Unlock()
	if list {
		// The SDK emits resources/list_changed only when its own registry
		// changes: add and remove a placeholder, which never appears in
		// resources/list because listResources answers from the file.
		n.server.AddResource(&mcp.Resource{URI: notesChangedProbe, Name: "_changed"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return nil, mcp.ResourceNotFoundError(notesChangedProbe)
		})
		n.server.RemoveResources(notesChangedProbe)
	}
	for uri := range updated {
		_ = n.server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

type addNoteIn struct {
	Title string   `json:"title" jsonschema:"short title of the note"`
	Body  string   `json:"body,omitempty" jsonschema:"the note text (Markdown allowed)"`
	Tags  []string `json:"tags,omitempty" jsonschema:"optional tags, e.g. [\"work\", \"ideas\"]"`
}

func (ns *notesServer) addNote(ctx context.Context, _ *mcp.CallToolRequest, in addNoteIn) (*mcp.CallToolResult, Note, error) {
	title, err := checkTitle(in.Title)
	if err != nil {
		return nil, Note{}, fmt.Errorf("add_note: %w", err)
	}
	if err := checkBody(len(in.Body)); err != nil {
		return nil, Note{}, fmt.Errorf("add_note: %w", err)
	}
	tags, err := checkTags(in.Tags)
	if err != nil {
		return nil, Note{}, fmt.Errorf("add_note: %w", err)
	}
	var n Note
	err = ns.store.update(ctx, func(f *notesFile) error {
		if len(f.Notes) >= ns.store.maxNotes {
			return fmt.Errorf("the notes file holds %d notes, the most it may: delete notes you no longer need, or point NOTES_FILE at a new file", len(f.Notes))
		}
		now := ns.store.now().UTC()
		n = Note{ID: f.newID(), Title: title, Body: in.Body, Tags: tags, Created: now, Updated: now}
		f.Notes = append(f.Notes, n)
		return nil
	})
	if err != nil {
		return nil, Note{}, fmt.Errorf("add_note: %w", err)
	}
	ns.notify.changed("")
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
	Limit int    `json:"limit,omitempty" jsonschema:"maximum number of notes to return (default 50, at most 1000)"`
}

// limitOr is n, or def when n is not positive, capped at maxListLimit.
func limitOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return min(n, maxListLimit)
}

func normTag(tag string) string {
	return strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(tag), "#")))
}

func (ns *notesServer) listNotes(ctx context.Context, _ *mcp.CallToolRequest, in listNotesIn) (*mcp.CallToolResult, noteList, error) {
	tag := normTag(in.Tag)
	limit := limitOr(in.Limit, 50)
	var out noteList
	err := ns.store.view(ctx, func(f *notesFile) error {
		notes := slices.Clone(f.Notes)
		slices.SortStableFunc(notes, func(a, b Note) int { return b.Updated.Compare(a.Updated) })
		for _, n := range notes {
			if tag == "" || slices.Contains(n.Tags, tag) {
				out.Total++
				if len(out.Notes) < limit {
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
		empty = fmt.Sprintf("No notes tagged %s.", quote(tag))
	}
	return textResult("%s", out.text(empty)), out, nil
}

type searchNotesIn struct {
	Query string `json:"query" jsonschema:"words to look for in note titles, bodies and tags"`
	Tag   string `json:"tag,omitempty" jsonschema:"only search notes with this tag"`
	Limit int    `json:"limit,omitempty" jsonschema:"maximum number of results (default 10, at most 1000)"`
}

func (ns *notesServer) searchNotes(ctx context.Context, _ *mcp.CallToolRequest, in searchNotesIn) (*mcp.CallToolResult, noteList, error) {
	terms := strings.Fields(strings.ToLower(in.Query))
	if len(terms) == 0 {
		return nil, noteList{}, fmt.Errorf("search_notes: query is required")
	}
	if len(terms) > maxQueryTerms {
		return nil, noteList{}, fmt.Errorf("search_notes: the query has %d words, at most %d: keep the most distinctive ones", len(terms), maxQueryTerms)
	}
	tag := normTag(in.Tag)
	type hit struct {
		n     Note
		score int
	}
	var hits []hit
	err := ns.store.view(ctx, func(f *notesFile) error {
		text := f.searchText()
		for i, n := range f.Notes {
			if err := ctxErr(ctx); err != nil {
				return err
			}
			if tag != "" && !slices.Contains(n.Tags, tag) {
				continue
			}
			score := 0
			for _, t := range terms {
				s := 3*strings.Count(text[i].title, t) + 2*strings.Count(text[i].tags, t) + strings.Count(text[i].body, t)
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
	return textResult("%s", out.text(fmt.Sprintf("No notes match %s.", quote(in.Query)))), out, nil
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

func (ns *notesServer) get(ctx context.Context, id string) (Note, error) {
	var n Note
	err := ns.store.view(ctx, func(f *notesFile) error {
		i, err := findNote(f, id)
		if err != nil {
			return err
		}
		n = f.Notes[i]
		return nil
	})
	return n, err
}

func (ns *notesServer) readNote(ctx context.Context, _ *mcp.CallToolRequest, in noteIDIn) (*mcp.CallToolResult, Note, error) {
	n, err := ns.get(ctx, in.ID)
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
	var title string
	if in.Title != nil {
		var err error
		if title, err = checkTitle(*in.Title); err != nil {
			return nil, Note{}, fmt.Errorf("update_note: %w", err)
		}
	}
	if in.Body != nil {
		if err := checkBody(len(*in.Body)); err != nil {
			return nil, Note{}, fmt.Errorf("update_note: %w", err)
		}
	}
	if err := checkBody(len(in.AppendBody)); err != nil {
		return nil, Note{}, fmt.Errorf("update_note: %w", err)
	}
	var tags []string
	if in.Tags != nil {
		var err error
		if tags, err = checkTags(*in.Tags); err != nil {
			return nil, Note{}, fmt.Errorf("update_note: %w", err)
		}
	}
	var n Note
	err := ns.store.update(ctx, func(f *notesFile) error {
		i, err := findNote(f, in.ID)
		if err != nil {
			return err
		}
		p := &f.Notes[i]
		if in.Title != nil {
			p.Title = title
		}
		if in.Body != nil {
			p.Body = *in.Body
		}
		if in.AppendBody != "" {
			body := p.Body
			if body != "" && !strings.HasSuffix(body, "\n") {
				body += "\n"
			}
			if err := checkBody(len(body) + len(in.AppendBody)); err != nil {
				return err
			}
			p.Body = body + in.AppendBody
		}
		if in.Tags != nil {
			p.Tags = tags
		}
		p.Updated = ns.store.now().UTC()
		n = *p
		return nil
	})
	if err != nil {
		return nil, Note{}, fmt.Errorf("update_note: %w", err)
	}
	ns.notify.changed(n.uri())
	return textResult("Updated note %s: %q", n.ID, n.Title), n, nil
}

type deleteNoteOut struct {
	Deleted string `json:"deleted" jsonschema:"id of the deleted note"`
	Title   string `json:"title"`
}

func (ns *notesServer) deleteNote(ctx context.Context, _ *mcp.CallToolRequest, in noteIDIn) (*mcp.CallToolResult, deleteNoteOut, error) {
	var out deleteNoteOut
	err := ns.store.update(ctx, func(f *notesFile) error {
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
	ns.notify.changed(noteScheme + out.Deleted)
	return textResult("Deleted note %s: %q", out.Deleted, out.Title), out, nil
}

// listResources answers resources/list from the file, paginated by offset.
func (ns *notesServer) listResources(ctx context.Context, req mcp.Request) (*mcp.ListResourcesResult, error) {
	start := 0
	if p, ok := req.GetParams().(*mcp.ListResourcesParams); ok && p != nil && p.Cursor != "" {
		n, err := strconv.Atoi(p.Cursor)
		if err != nil || n < 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("resources/list: invalid cursor %s: pass back the nextCursor of the previous page", quote(p.Cursor))}
		}
		start = n
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}}
	err := ns.store.view(ctx, func(f *notesFile) error {
		for i := start; i < len(f.Notes) && len(res.Resources) < notesPageSize; i++ {
			n := f.Notes[i]
			desc := "Note"
			if len(n.Tags) > 0 {
				desc += " tagged " + strings.Join(n.Tags, ", ")
			}
			res.Resources = append(res.Resources, &mcp.Resource{
				URI: n.uri(), Name: "note-" + n.ID, Title: n.Title, Description: desc,
				MIMEType: "text/markdown", Size: int64(n.markdownSize()),
			})
		}
		if start < len(f.Notes) && start+len(res.Resources) < len(f.Notes) {
			res.NextCursor = strconv.Itoa(start + len(res.Resources))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resources/list: %w", err)
	}
	return res, nil
}

func (ns *notesServer) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	n, err := ns.get(ctx, strings.TrimPrefix(uri, noteScheme))
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, mcp.ResourceNotFoundError(uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: n.markdown()}}}, nil
}

func (ns *notesServer) summarizePrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	tag := normTag(req.Params.Arguments["tag"])
	var b strings.Builder
	scope := "all my notes"
	if tag != "" {
		scope = fmt.Sprintf("my notes tagged %s", quote(tag))
	}
	fmt.Fprintf(&b, "Summarize %s. Group related notes, list the key points, and end with any open action items or questions.\n\n", scope)
	included, left := 0, 0
	err := ns.store.view(ctx, func(f *notesFile) error {
		for _, n := range f.Notes {
			if tag != "" && !slices.Contains(n.Tags, tag) {
				continue
			}
			if left > 0 || b.Len()+n.markdownSize() > maxPromptNotes {
				left++
				continue
			}
			b.WriteString("---\n")
			n.writeMarkdown(&b)
			included++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("summarize_notes: %w", err)
	}
	if included+left == 0 {
		b.WriteString("(There are no matching notes.)\n")
	}
	if left > 0 {
		fmt.Fprintf(&b, "---\n(%d more notes are not included: the prompt holds at most %s of notes; pass a tag to narrow it.)\n", left, byteSize(maxPromptNotes))
	}
	return &mcp.GetPromptResult{
		Description: fmt.Sprintf("Summary request for %d note(s)", included),
		Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: b.String()}}},
	}, nil
}

// complete offers existing tags for the summarize_notes "tag" argument and
// existing ids for the note://{id} template.
func (ns *notesServer) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	if req.Params == nil || req.Params.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete: ref is required"}
	}
	prefix := strings.ToLower(req.Params.Argument.Value)
	seen := map[string]bool{}
	var values []string
	add := func(v string) {
		if strings.HasPrefix(v, prefix) && !seen[v] {
			seen[v] = true
			values = append(values, v)
		}
	}
	err := ns.store.view(ctx, func(f *notesFile) error {
		for _, n := range f.Notes {
			switch {
			case req.Params.Ref.Type == "ref/prompt" && req.Params.Argument.Name == "tag":
				for _, t := range n.Tags {
					add(t)
				}
			case req.Params.Ref.Type == "ref/resource" && req.Params.Argument.Name == "id":
				add(n.ID)
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
