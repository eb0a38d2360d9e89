package index

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func TestMarkFilePaths(t *testing.T) {
	t.Parallel()
	m := fileMarker + " "
	tests := []struct{ in, want string }{
		{"save it in /root/markdown/bitcoin.md", "save it in " + m + "/root/markdown/bitcoin.md"},
		{"read `~/notes/todo.txt`, then stop.", "read " + m + "`~/notes/todo.txt`, then stop."},
		{"open ./data.json.", "open " + m + "./data.json."},
		{"list /home/user/documents", "list /home/user/documents"},               // no extension: a directory
		{"fetch https://example.com/a.html", "fetch https://example.com/a.html"}, // a URL
		{"read report_data.csv", "read report_data.csv"},                         // no slash: not a path
		{"and/or .5 /x.", "and/or .5 /x."},
		{"", ""},
	}
	for _, tt := range tests {
		if got := markFilePaths(tt.in); got != tt.want {
			t.Errorf("markFilePaths(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestFilePathPairsWithVerb checks that a path implies "file" for the verb
// before it: "save it in <path>" finds write_file through save+file and the
// synonym pair write+file, above a tool that saves something else; without
// the two mechanisms it ranks below it.
func TestFilePathPairsWithVerb(t *testing.T) {
	t.Parallel()
	tools := []Tool{
		{Name: "fs__write_file", Server: "fs", Description: "Create a new file or overwrite an existing file with new content."},
		{Name: "slides__save_presentation", Server: "slides", Description: "Save the presentation to disk."},
		{Name: "fs__read_file", Server: "fs", Description: "Read the complete contents of a file."},
		{Name: "notes__search_notes", Server: "notes", Description: "Search notes by keyword."},
	}
	for _, tt := range []struct {
		opts       func(*Options)
		writeFirst bool // write_file above save_presentation
	}{
		{func(o *Options) {}, true},
		{func(o *Options) { o.FilePaths, o.SynonymPairs = false, 0 }, false},
	} {
		o := DefaultOptions()
		tt.opts(&o)
		ix, err := NewWithOptions(tools, o)
		if err != nil {
			t.Fatal(err)
		}
		res := ix.Search("Summarize the notes and save it in /root/markdown/summary.md", "", 4)
		rank := map[string]int{}
		for i, r := range res {
			rank[r.Name] = i + 1
		}
		w, s := rank["fs__write_file"], rank["slides__save_presentation"]
		if w == 0 || s == 0 || (w < s) != tt.writeFirst {
			t.Errorf("FilePaths %v SynonymPairs %v: write_file rank %d, save_presentation rank %d, want write_file first %v (%v)",
				o.FilePaths, o.SynonymPairs, w, s, tt.writeFirst, res)
		}
	}
}

// Request phrases are dropped from requests as whole phrases only; the
// verbs alone stay, and tool texts keep them.
func TestRequestPhrases(t *testing.T) {
	t.Parallel()
	an, err := newAnalyzer(DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want []string
	}{
		{"Show me today's trending topics", []string{"today", "trending", "topic"}},
		{"Give me some advice on what to wear", []string{"advice", "wear"}},
		{"let me know the price, then tell us", []string{"price"}},
		{"show tables", []string{"show", "table"}},
		{"give feedback to me", []string{"give", "feedback"}},
		{"Show", []string{"show"}},
		{"me show", []string{"show"}},
	}
	for _, tc := range tests {
		if got := an.queryTerms(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("queryTerms(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got, want := an.terms("Show me the tables"), []string{"show", "table"}; !slices.Equal(got, want) {
		t.Errorf("terms (tool text) = %q, want %q", got, want)
	}
}

// A request that says a tool's multi-word name in order, a few words
// apart at most, multiplies that tool's score by 1 + NamePhrase, once.
func TestNamePhrase(t *testing.T) {
	t.Parallel()
	tools := []Tool{
		{Name: "notes__create_note", Server: "notes", Description: "Store a new entry with a title and content."},
		{Name: "notes__get_note", Server: "notes", Description: "Retrieve the content of a note by its title."},
		{Name: "notes__get_note_tags", Server: "notes", Description: "Tags of an entry."},
		{Name: "notes__get_note_tag_count", Server: "notes", Description: "How many labels an entry has."},
		{Name: "other__create_note", Server: "other", Description: "Write a note."},
	}
	off := DefaultOptions()
	off.NamePhrase = 0
	without, err := NewWithOptions(tools, off)
	if err != nil {
		t.Fatal(err)
	}
	with := mustNew(t, tools)
	boost := 1 + DefaultOptions().NamePhrase
	for _, tc := range []struct {
		query   string
		server  string
		boosted []string // the tools of the result whose score is boosted
	}{
		{"create a new note", "", []string{"notes__create_note", "other__create_note"}},
		{"create a new note", "notes", []string{"notes__create_note"}},
		{"create one two note", "", []string{"notes__create_note", "other__create_note"}},
		{"create one two three note", "", nil},                                                              // three words apart
		{"note: create it", "", nil},                                                                        // out of order
		{"create note, then create another note", "", []string{"notes__create_note", "other__create_note"}}, // once
		{"get the note's tags", "", []string{"notes__get_note", "notes__get_note_tags"}},
		{"get the tags of a note", "", []string{"notes__get_note"}}, // get_note_tags: out of order
		// The second "note" is the one within reach of "tags".
		{"get note note alpha beta tags", "", []string{"notes__get_note", "notes__get_note_tags"}},
		// Names are looked for in the first maxPhraseWords words only.
		{strings.Repeat("alpha ", maxPhraseWords) + "create note", "", nil},
		// Only the second "tag" is within reach of "count".
		{"get note tags tags alpha beta count", "", []string{"notes__get_note", "notes__get_note_tags", "notes__get_note_tag_count"}},
	} {
		a, b := without.Search(tc.query, tc.server, 10), with.Search(tc.query, tc.server, 10)
		base := map[string]float64{}
		for _, r := range a {
			base[r.Name] = r.Score
		}
		for _, r := range b {
			want := base[r.Name]
			if slices.Contains(tc.boosted, r.Name) {
				want *= boost
			}
			if math.Abs(r.Score-want) > 1e-9*want {
				t.Errorf("Search(%q, %q): %s scores %g, want %g (boosted: %v)", tc.query, tc.server, r.Name, r.Score, want, slices.Contains(tc.boosted, r.Name))
			}
		}
		if len(a) != len(b) {
			t.Errorf("Search(%q): %d results with NamePhrase, %d without", tc.query, len(b), len(a))
		}
	}
}
