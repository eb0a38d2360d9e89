package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

func TestNotesLifecycle(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sub", "notes.json")
	cs, _ := connect(t, "notes", map[string]string{"NOTES_FILE": file})
	runToolCases(t, cs, []toolCase{
		{name: "add 1", tool: "add_note", args: map[string]any{"title": "Groceries", "body": "milk, eggs, bread", "tags": []string{"Home", " shopping ", "home"}},
			fields: map[string]string{"id": `"1"`, "tags": `["home","shopping"]`}, text: []string{"note://1"}},
		{name: "add 2", tool: "add_note", args: map[string]any{"title": "Project kickoff", "body": "Discuss milestones with the team.\nBring the milk-based coffee.", "tags": []string{"work"}},
			fields: map[string]string{"id": `"2"`}},
		{name: "add 3", tool: "add_note", args: map[string]any{"title": "Milk brands", "tags": []string{"shopping"}}, fields: map[string]string{"id": `"3"`}},
		{name: "add no title", tool: "add_note", args: map[string]any{"title": "  "}, wantErr: "title is required"},
		{name: "list all", tool: "list_notes", args: map[string]any{}, fields: map[string]string{"total": "3"}, text: []string{"[1] Groceries (#home #shopping)", "[2] Project kickoff"}},
		{name: "list tag", tool: "list_notes", args: map[string]any{"tag": "#Shopping"}, fields: map[string]string{"total": "2"}},
		{name: "list limit", tool: "list_notes", args: map[string]any{"limit": 1}, fields: map[string]string{"total": "3"}, text: []string{"showing 1"}},
		{name: "list empty tag", tool: "list_notes", args: map[string]any{"tag": "none"}, fields: map[string]string{"total": "0", "notes": "[]"}, text: []string{`No notes tagged "none"`}},
		// "milk" is in a title (3), body (1), and another title; title hits rank first.
		{name: "search", tool: "search_notes", args: map[string]any{"query": "MILK"}, fields: map[string]string{"total": "3"}, text: []string{"3 note(s):\n- [3] Milk brands"}},
		{name: "search all terms", tool: "search_notes", args: map[string]any{"query": "milk team"}, fields: map[string]string{"total": "1"}, text: []string{"[2] Project kickoff"}},
		{name: "search tag filter", tool: "search_notes", args: map[string]any{"query": "milk", "tag": "work"}, fields: map[string]string{"total": "1"}},
		{name: "search none", tool: "search_notes", args: map[string]any{"query": "zebra"}, text: []string{`No notes match "zebra"`}},
		{name: "search empty", tool: "search_notes", args: map[string]any{"query": " "}, wantErr: "query is required"},
		{name: "read", tool: "read_note", args: map[string]any{"id": "1"}, fields: map[string]string{"body": `"milk, eggs, bread"`}, text: []string{"# Groceries", "Tags: home, shopping"}},
		{name: "read by uri", tool: "read_note", args: map[string]any{"id": "note://3"}, fields: map[string]string{"title": `"Milk brands"`}},
		{name: "read missing", tool: "read_note", args: map[string]any{"id": "99"}, wantErr: `no note with id "99"`},
		{name: "update append", tool: "update_note", args: map[string]any{"id": "1", "append_body": "butter"}, fields: map[string]string{"body": `"milk, eggs, bread\nbutter"`, "title": `"Groceries"`}},
		{name: "update title tags", tool: "update_note", args: map[string]any{"id": "1", "title": "Shopping list", "tags": []string{}}, fields: map[string]string{"title": `"Shopping list"`, "tags": "null"}},
		{name: "update nothing", tool: "update_note", args: map[string]any{"id": "1"}, wantErr: "nothing to change"},
		{name: "update missing", tool: "update_note", args: map[string]any{"id": "42", "body": "x"}, wantErr: "no note with id"},
		{name: "delete", tool: "delete_note", args: map[string]any{"id": "2"}, fields: map[string]string{"deleted": `"2"`, "title": `"Project kickoff"`}},
		{name: "delete again", tool: "delete_note", args: map[string]any{"id": "2"}, wantErr: "no note with id"},
		{name: "ids not reused", tool: "add_note", args: map[string]any{"title": "After delete"}, fields: map[string]string{"id": `"4"`}},
	})

	// The file is valid JSON with the expected notes.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f notesFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Notes) != 3 || f.NextID != 5 {
		t.Errorf("file has %d notes, next_id %d; want 3, 5", len(f.Notes), f.NextID)
	}
	if info, err := os.Stat(file); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("notes file mode = %v, %v; want 0600", info.Mode(), err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(filepath.Dir(file), ".notes-*.tmp")); len(tmp) > 0 {
		t.Errorf("temp files left behind: %v", tmp)
	}
}

func TestNotesSearchRanking(t *testing.T) {
	cs, _ := connect(t, "notes", map[string]string{"NOTES_FILE": filepath.Join(t.TempDir(), "n.json")})
	call(t, cs, "add_note", map[string]any{"title": "Misc", "body": "remember the gym"})
	call(t, cs, "add_note", map[string]any{"title": "Gym plan", "body": "legs"})
	_, sc, _ := call(t, cs, "search_notes", map[string]any{"query": "gym"})
	notes := sc["notes"].([]any)
	if len(notes) != 2 || notes[0].(map[string]any)["title"] != "Gym plan" {
		t.Fatalf("ranking = %v, want the title match first", notes)
	}
	if snip := notes[1].(map[string]any)["snippet"]; snip != "remember the gym" {
		t.Errorf("snippet = %v", snip)
	}
}

func TestNotesResourcesAndPrompt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.json")
	listChanged := make(chan struct{}, 10)
	updated := make(chan string, 10)
	cs, _ := connectOpts(t, "notes", map[string]string{"NOTES_FILE": file}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) { listChanged <- struct{}{} },
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updated <- req.Params.URI
		},
	})
	ctx := context.Background()
	caps := cs.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.ListChanged || !caps.Resources.Subscribe || caps.Prompts == nil || caps.Completions == nil {
		t.Fatalf("capabilities = %+v", caps)
	}

	lr, err := cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 0 {
		t.Fatalf("empty store: resources = %v, %v", lr, err)
	}
	lt, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(lt.ResourceTemplates) != 1 || lt.ResourceTemplates[0].URITemplate != "note://{id}" {
		t.Fatalf("templates = %v, %v", lt, err)
	}

	call(t, cs, "add_note", map[string]any{"title": "Alpha", "body": "first body", "tags": []string{"greek"}})
	waitSignal(t, listChanged, "resources/list_changed after add_note")
	call(t, cs, "add_note", map[string]any{"title": "Beta", "body": "second body", "tags": []string{"greek", "letters"}})
	waitSignal(t, listChanged, "resources/list_changed after second add_note")

	lr, err = cs.ListResources(ctx, nil)
	if err != nil || len(lr.Resources) != 2 {
		t.Fatalf("resources = %v, %v", lr, err)
	}
	if r := lr.Resources[1]; r.URI != "note://2" || r.Title != "Beta" || r.MIMEType != "text/markdown" || !strings.Contains(r.Description, "letters") {
		t.Errorf("resource = %+v", r)
	}
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://1"})
	if err != nil || !strings.Contains(rr.Contents[0].Text, "# Alpha") || !strings.Contains(rr.Contents[0].Text, "first body") {
		t.Fatalf("read note://1 = %v, %v", rr, err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://77"}); err == nil {
		t.Error("reading a missing note succeeded")
	}

	// Subscribed readers hear about updates.
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://1"}); err != nil {
		t.Fatal(err)
	}
	call(t, cs, "update_note", map[string]any{"id": "1", "body": "changed"})
	select {
	case uri := <-updated:
		if uri != "note://1" {
			t.Errorf("updated uri = %q", uri)
		}
	case <-time.After(5 * time.Second):
		t.Error("no resources/updated after update_note")
	}

	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize_notes", Arguments: map[string]string{"tag": "letters"}})
	if err != nil {
		t.Fatal(err)
	}
	text := gp.Messages[0].Content.(*mcp.TextContent).Text
	if !strings.Contains(text, `tagged "letters"`) || !strings.Contains(text, "# Beta") || strings.Contains(text, "# Alpha") {
		t.Errorf("prompt text = %q", text)
	}
	gp, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize_notes"})
	if err != nil || !strings.Contains(gp.Messages[0].Content.(*mcp.TextContent).Text, "# Alpha") {
		t.Errorf("prompt without tag = %v, %v", gp, err)
	}

	cr, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: "summarize_notes"},
		Argument: mcp.CompleteParamsArgument{Name: "tag", Value: "l"},
	})
	if err != nil || strings.Join(cr.Completion.Values, ",") != "letters" {
		t.Errorf("complete tag = %v, %v", cr, err)
	}
	cr, err = cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/resource", URI: "note://{id}"},
		Argument: mcp.CompleteParamsArgument{Name: "id", Value: ""},
	})
	if err != nil || strings.Join(cr.Completion.Values, ",") != "1,2" {
		t.Errorf("complete id = %v, %v", cr, err)
	}
}

func TestNotesResourcePagination(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.json")
	f := &notesFile{}
	for i := 1; i <= notesPageSize+5; i++ {
		f.Notes = append(f.Notes, Note{ID: fmt.Sprint(i), Title: fmt.Sprint("n", i)})
	}
	if err := newNoteStore(file).save(f); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, "notes", map[string]string{"NOTES_FILE": file})
	n := 0
	for r, err := range cs.Resources(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if want := fmt.Sprint("note://", n); r.URI != want {
			t.Fatalf("resource %d = %s, want %s", n, r.URI, want)
		}
	}
	if n != notesPageSize+5 {
		t.Errorf("listed %d resources, want %d", n, notesPageSize+5)
	}
}

// TestNotesConcurrent adds notes from two servers over one file at once:
// every add must survive (no lost update) and ids must be unique.
func TestNotesConcurrent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.json")
	env := map[string]string{"NOTES_FILE": file}
	a, _ := connect(t, "notes", env)
	b, _ := connect(t, "notes", env)
	const perClient = 15
	var wg sync.WaitGroup
	for ci, cs := range []*mcp.ClientSession{a, b} {
		for i := range perClient {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "add_note", Arguments: map[string]any{"title": fmt.Sprintf("c%d-%d", ci, i)}})
				if err != nil || res.IsError {
					t.Errorf("add_note: %v %v", err, res)
				}
			}()
		}
	}
	wg.Wait()
	var f notesFile
	data, _ := os.ReadFile(file)
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, n := range f.Notes {
		ids[n.ID] = true
	}
	if len(f.Notes) != 2*perClient || len(ids) != 2*perClient {
		t.Errorf("got %d notes with %d distinct ids, want %d", len(f.Notes), len(ids), 2*perClient)
	}
}

func TestNotesCorruptFileIsKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.json")
	if err := os.WriteFile(file, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, "notes", map[string]string{"NOTES_FILE": file})
	text, _, isErr := call(t, cs, "add_note", map[string]any{"title": "x"})
	if !isErr || !strings.Contains(text, "not valid JSON") || !strings.Contains(text, "add_note") {
		t.Errorf("add_note on corrupt file: %q (isError %v)", text, isErr)
	}
	if data, _ := os.ReadFile(file); string(data) != "{not json" {
		t.Errorf("corrupt file was overwritten: %q", data)
	}
}

func TestNotesDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	t.Setenv("AppData", dir)
	cs, _ := connect(t, "notes", nil)
	call(t, cs, "add_note", map[string]any{"title": "default"})
	want, _ := os.UserConfigDir()
	if _, err := os.Stat(filepath.Join(want, "mcp-hub", "notes.json")); err != nil {
		t.Errorf("default notes file not created: %v", err)
	}
}

func waitSignal(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// saveNotes writes n notes straight to file, each with a body of bodySize
// bytes.
func saveNotes(t *testing.T, file string, n, bodySize int) {
	t.Helper()
	f := &notesFile{NextID: n + 1}
	now := time.Now().UTC()
	for i := 1; i <= n; i++ {
		f.Notes = append(f.Notes, Note{ID: fmt.Sprint(i), Title: fmt.Sprint("note ", i), Body: strings.Repeat("b", bodySize), Tags: []string{"t"}, Created: now, Updated: now})
	}
	if err := newNoteStore(file).save(f); err != nil {
		t.Fatal(err)
	}
}

// TestNotesLimits: every size and count limit fails that call with an error
// naming the limit and the fix, and leaves the file as it was.
func TestNotesLimits(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	cs, _ := connect(t, "notes", map[string]string{"NOTES_FILE": small})
	runToolCases(t, cs, []toolCase{
		{name: "add", tool: "add_note", args: map[string]any{"title": "one", "body": strings.Repeat("b", maxNoteBody-10)}, fields: map[string]string{"id": `"1"`}},
		{name: "title", tool: "add_note", args: map[string]any{"title": strings.Repeat("é", maxNoteTitle+1)}, wantErr: "the title is 201 characters, at most 200"},
		{name: "body", tool: "add_note", args: map[string]any{"title": "x", "body": strings.Repeat("b", maxNoteBody+1)}, wantErr: "at most 100 KiB per note: split the text into several notes"},
		{name: "append past the body limit", tool: "update_note", args: map[string]any{"id": "1", "append_body": strings.Repeat("a", 20)}, wantErr: "at most 100 KiB per note"},
		{name: "replace body past the limit", tool: "update_note", args: map[string]any{"id": "1", "body": strings.Repeat("b", maxNoteBody+1)}, wantErr: "at most 100 KiB"},
		{name: "too many tags", tool: "add_note", args: map[string]any{"title": "x", "tags": make([]string, 5000)}, wantErr: "5000 tags, at most 20 per note"},
		{name: "long tag", tool: "update_note", args: map[string]any{"id": "1", "tags": []string{strings.Repeat("t", 51)}}, wantErr: "longer than 50 characters"},
		{name: "too many query words", tool: "search_notes", args: map[string]any{"query": strings.Repeat("w ", 33)}, wantErr: "the query has 33 words, at most 32"},
		{name: "long query quoted short", tool: "search_notes", args: map[string]any{"query": strings.Repeat("z", 64<<10)}, text: []string{"(65536 bytes)"}},
		{name: "long id quoted short", tool: "read_note", args: map[string]any{"id": strings.Repeat("9", 64<<10)}, wantErr: "(65536 bytes)"},
		{name: "unchanged", tool: "read_note", args: map[string]any{"id": "1"}, fields: map[string]string{"title": `"one"`}},
	})

	// The note count limit, lowered to 1,100 notes (the check is the same).
	full := filepath.Join(dir, "full.json")
	saveNotes(t, full, 1100, 0)
	cs, _ = connect(t, "notes", map[string]string{"NOTES_FILE": full})
	runToolCases(t, cs, []toolCase{
		{name: "list limit capped", tool: "list_notes", args: map[string]any{"limit": 1 << 40}, fields: map[string]string{"total": "1100"}, text: []string{"1100 note(s), showing 1000"}},
		{name: "search limit capped", tool: "search_notes", args: map[string]any{"query": "note", "limit": 5000}, fields: map[string]string{"total": "1100"}, text: []string{"showing 1000"}},
	})
	counted := &notesServer{store: newNoteStore(full), notify: &notifier{server: mcp.NewServer(&mcp.Implementation{Name: "n"}, nil), updated: map[string]bool{}}}
	counted.store.maxNotes = 1100
	if _, _, err := counted.addNote(context.Background(), nil, addNoteIn{Title: "x"}); err == nil ||
		!strings.Contains(err.Error(), "holds 1100 notes, the most it may: delete notes you no longer need, or point NOTES_FILE at a new file") {
		t.Errorf("add_note past the note count: %v", err)
	}

	// The file limit, lowered to 1 MiB so that the test does not encode
	// 16 MiB files (seconds under -race); the check is the same.
	bounded := filepath.Join(dir, "bounded.json")
	saveNotes(t, bounded, 10, maxNoteBody-1000) // 0.97 MiB: no room for another full note
	ns := &notesServer{store: newNoteStore(bounded), notify: &notifier{server: mcp.NewServer(&mcp.Implementation{Name: "n"}, nil), updated: map[string]bool{}}}
	ns.store.maxBytes = 1 << 20
	ctx := context.Background()
	if _, _, err := ns.addNote(ctx, nil, addNoteIn{Title: "x", Body: strings.Repeat("b", maxNoteBody)}); err == nil ||
		!strings.Contains(err.Error(), "over its 1 MiB limit: delete or shorten notes, or point NOTES_FILE at a new file") {
		t.Errorf("add_note past the file limit: %v", err)
	}
	if _, n, err := ns.addNote(ctx, nil, addNoteIn{Title: "small"}); err != nil || n.ID != "11" {
		t.Errorf("a small note after that: %+v, %v", n, err)
	}

	// summarize_notes puts at most 1 MiB of notes in its prompt.
	cs, _ = connect(t, "notes", map[string]string{"NOTES_FILE": bounded})
	call(t, cs, "add_note", map[string]any{"title": "past the prompt", "body": strings.Repeat("b", 60<<10)})
	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "summarize_notes"})
	if err != nil {
		t.Fatal(err)
	}
	if text := gp.Messages[0].Content.(*mcp.TextContent).Text; len(text) > maxPromptNotes+1000 ||
		!strings.Contains(text, "(1 more notes are not included: the prompt holds at most 1 MiB of notes; pass a tag to narrow it.)") {
		t.Errorf("summarize_notes over 1 MiB of notes: %d bytes, ending %q", len(text), text[max(0, len(text)-200):])
	}

	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, maxNotesFileBytes+1); err != nil { // sparse: instant, and never read
		t.Fatal(err)
	}
	cs, _ = connect(t, "notes", map[string]string{"NOTES_FILE": huge})
	runToolCases(t, cs, []toolCase{
		{name: "file over the limit", tool: "list_notes", args: map[string]any{}, wantErr: "is 16 MiB, over the 16 MiB limit: move notes out of it, or point NOTES_FILE at a new file"},
	})

	_, err = cs.ListResources(context.Background(), &mcp.ListResourcesParams{Cursor: "-1"})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("resources/list with cursor -1: %v, want JSON-RPC invalid params", err)
	}
	// The SDK's "resource not found" quotes the URI with %q, which is not
	// JSON for a control character: the boundary drops such data, or the
	// answer could not be encoded and would never come.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://\a\x01"}); !errors.As(err, &rpc) || rpc.Code != mcp.CodeResourceNotFound {
		t.Errorf("resources/read of a URI with control characters: %v, want resource not found", err)
	}
	// The SDK's "resource not found" quotes the URI: the boundary cuts it.
	_, err = cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "note://" + strings.Repeat("9", 1<<20)})
	if !errors.As(err, &rpc) || len(rpc.Message) > 3<<10 || len(rpc.Data) > 3<<10 {
		t.Errorf("resources/read of a 1 MiB URI: %d-byte message, %d bytes of data (%v)", len(rpc.Message), len(rpc.Data), err != nil)
	}
}

// TestNotesIDs: a hand-edited id near the top of int does not wrap the next
// id into one that is taken.
func TestNotesIDs(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.json")
	if err := os.WriteFile(file, []byte(`{"next_id": 0, "notes": [{"id": "1", "title": "a"}, {"id": "9223372036854775807", "title": "b"}, {"id": "x", "title": "c"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cs, _ := connect(t, "notes", map[string]string{"NOTES_FILE": file})
	runToolCases(t, cs, []toolCase{
		{name: "next", tool: "add_note", args: map[string]any{"title": "d"}, fields: map[string]string{"id": `"2"`}},
		{name: "after", tool: "add_note", args: map[string]any{"title": "e"}, fields: map[string]string{"id": `"3"`}},
	})
}

// TestNotesCache: paging through resources/list parses the file once, not
// once per page; a change by another store (another hub process) or by
// hand is seen at the next read.
func TestNotesCache(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.json")
	saveNotes(t, file, 10*notesPageSize+50, 100)
	ns := &notesServer{store: newNoteStore(file)}
	ctx := context.Background()
	pages := func() int {
		t.Helper()
		n, cursor := 0, ""
		for {
			res, err := ns.listResources(ctx, &mcp.ListResourcesRequest{Params: &mcp.ListResourcesParams{Cursor: cursor}})
			if err != nil {
				t.Fatal(err)
			}
			n += len(res.Resources)
			if cursor = res.NextCursor; cursor == "" {
				return n
			}
		}
	}
	if n := pages(); n != 1050 || ns.store.parses != 1 {
		t.Fatalf("listed %d resources with %d parses, want 1050 with 1", n, ns.store.parses)
	}

	other := newNoteStore(file)
	if err := other.update(ctx, func(f *notesFile) error {
		f.Notes = append(f.Notes, Note{ID: f.newID(), Title: "from another process"})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := pages(); n != 1051 || ns.store.parses != 2 {
		t.Fatalf("after another store's write: listed %d with %d parses, want 1051 with 2", n, ns.store.parses)
	}
	if n := pages(); n != 1051 || ns.store.parses != 2 {
		t.Fatalf("listed %d with %d parses, want 1051 with 2", n, ns.store.parses)
	}

	// A hand edit that keeps the size (the rev at the start still differs:
	// it was written by hand without one).
	if err := os.WriteFile(file, []byte(`{"notes": [{"id": "7", "title": "by hand"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if n := pages(); n != 1 {
		t.Fatalf("after a hand edit: listed %d, want 1", n)
	}
}

// TestNotesNotificationsCoalesced: a burst of changes from several clients
// gives at most one resources/list_changed and one resources/updated per
// notifyInterval (it was one resources/updated per change), and the first
// arrives while the burst still goes on (go-sdk's debounce would postpone
// it to the end).
func TestNotesNotificationsCoalesced(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.json")
	var listChanged, updated atomic.Int64
	// Closed at the first resources/list_changed (the add's, before the
	// burst) and at the second (the first of the burst).
	afterAdd, inBurst := make(chan struct{}), make(chan struct{})
	cs, _ := connectOpts(t, "notes", map[string]string{"NOTES_FILE": file}, &mcp.ClientOptions{
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			switch listChanged.Add(1) {
			case 1:
				close(afterAdd)
			case 2:
				close(inBurst)
			}
		},
		ResourceUpdatedHandler: func(context.Context, *mcp.ResourceUpdatedNotificationRequest) { updated.Add(1) },
	})
	ctx := context.Background()
	call(t, cs, "add_note", map[string]any{"title": "target"})
	if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "note://1"}); err != nil {
		t.Fatal(err)
	}
	<-afterAdd // the burst starts from quiet

	start := time.Now()
	var changes atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-inBurst:
					if changes.Load() >= 200 {
						return
					}
				default:
				}
				if changes.Load() >= 2000 || time.Since(start) > 20*time.Second {
					return
				}
				args := map[string]any{"id": "1", "body": fmt.Sprint(w, i)}
				if i%2 == 1 {
					args = map[string]any{"id": "1", "title": fmt.Sprint("n", w, i)}
				}
				if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "update_note", Arguments: args}); err != nil || res.IsError {
					t.Errorf("update_note: %v %+v", err, res)
					return
				}
				changes.Add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	select {
	case <-inBurst:
	default:
		t.Fatalf("no resources/list_changed during a burst of %d changes over %s", changes.Load(), elapsed)
	}
	bound := int64(elapsed/notifyInterval) + 2
	if n := listChanged.Load() - 1; n > bound {
		t.Errorf("%d changes in %s gave %d resources/list_changed, want at most %d", changes.Load(), elapsed, n, bound)
	}
	if n := updated.Load(); n > bound {
		t.Errorf("%d changes in %s gave %d resources/updated, want at most %d", changes.Load(), elapsed, n, bound)
	}
	t.Logf("%d changes in %s: %d list_changed, %d updated", changes.Load(), elapsed, listChanged.Load()-1, updated.Load())
}
