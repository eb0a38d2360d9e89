package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	if err := (&noteStore{path: file}).save(f); err != nil {
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
