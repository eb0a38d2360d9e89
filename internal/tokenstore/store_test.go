package tokenstore

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test binary doubles as a second process that uses the store:
// TOKENSTORE_HELPER=hold|count, with the store folder, server and URL in
// TOKENSTORE_ARGS (tab-separated).
const envHelper = "TOKENSTORE_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envHelper); mode != "" {
		os.Exit(helper(mode, strings.Split(os.Getenv("TOKENSTORE_ARGS"), "\t")))
	}
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	s, err := Open(args[0])
	if err != nil {
		fmt.Println(err)
		return 1
	}
	ctx := context.Background()
	switch mode {
	case "hold": // take the lock, say so, keep it until stdin closes
		unlock, err := s.lock(ctx, args[1], args[2])
		if err != nil {
			fmt.Println(err)
			return 1
		}
		fmt.Println("locked")
		io.Copy(io.Discard, os.Stdin)
		unlock()
	case "count": // increment the counter N times
		n, _ := strconv.Atoi(args[3])
		for range n {
			if _, err := s.Update(ctx, args[1], args[2], increment); err != nil {
				fmt.Println(err)
				return 1
			}
		}
	}
	return 0
}

// increment counts in the access token, so that lost updates show.
func increment(r *Record) (*Record, error) {
	if r == nil {
		r = &Record{Token: &Token{AccessToken: "0"}}
	}
	n, err := strconv.Atoi(r.Token.AccessToken)
	if err != nil {
		return nil, err
	}
	r.Token.AccessToken = strconv.Itoa(n + 1)
	return r, nil
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestRoundTripAndModes(t *testing.T) {
	state := filepath.Join(t.TempDir(), "state")
	s, err := Open(state)
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	rec := &Record{
		Client: &Client{ID: "cid", Secret: "csecret", Registration: Dynamic, AuthStyle: 1, TokenURL: "https://as.example/token"},
		Token:  &Token{AccessToken: "at", RefreshToken: "rt", Expiry: time.Now().Add(time.Hour).UTC().Round(time.Second), Scopes: []string{"a", "b"}},
	}
	if _, err := s.Update(ctx, "github", "https://api.example/mcp", func(*Record) (*Record, error) { return rec, nil }); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctx, "github", "https://api.example/mcp")
	if err != nil || got == nil {
		t.Fatalf("Load: %v, %v", got, err)
	}
	if got.Client.Secret != "csecret" || got.Token.RefreshToken != "rt" || !got.Token.Expiry.Equal(rec.Token.Expiry) || got.Server != "github" {
		t.Errorf("round trip lost data: %+v %+v", got.Client, got.Token)
	}
	if runtime.GOOS == "windows" {
		return
	}
	for path, want := range map[string]os.FileMode{
		s.Dir(): 0o700,
		s.Path("github", "https://api.example/mcp"): 0o600,
	} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), want)
		}
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(s.Dir())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestOpenMakesTokensFolderPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	state := t.TempDir()
	s, err := Open(state)
	if err != nil {
		t.Fatal(err)
	}
	// Reading makes nothing.
	if r, err := s.Load(ctxT(t), "x", "https://x.example/mcp"); r != nil || err != nil {
		t.Fatalf("Load from an empty store: %v, %v", r, err)
	}
	if _, err := os.Stat(s.Dir()); !os.IsNotExist(err) {
		t.Errorf("Load created %s", s.Dir())
	}
	if err := os.MkdirAll(s.Dir(), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chmod(s.Dir(), 0o755)
	if _, err := s.Update(ctxT(t), "x", "https://x.example/mcp", increment); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(s.Dir())
	if st.Mode().Perm() != 0o700 {
		t.Errorf("tokens folder mode %v, want 0700", st.Mode().Perm())
	}
}

// A record belongs to a server name AND a URL: neither a renamed server
// nor the same name at another URL gets it.
func TestKeyedByNameAndURL(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if _, err := s.Update(ctx, "linear", "https://mcp.linear.app/mcp", increment); err != nil {
		t.Fatal(err)
	}
	for _, k := range []struct{ server, url string }{
		{"linear", "https://evil.example/mcp"},
		{"linear2", "https://mcp.linear.app/mcp"},
		{"Linear", "https://mcp.linear.app/mcp"},
	} {
		r, err := s.Load(ctx, k.server, k.url)
		if err != nil || r != nil {
			t.Errorf("Load(%q, %q) = %+v, %v; want nothing", k.server, k.url, r, err)
		}
	}
	// A file whose content names another server is not handed out even
	// under its own file name.
	path := s.Path("linear", "https://mcp.linear.app/mcp")
	data, _ := os.ReadFile(path)
	if len(data) == 0 {
		t.Fatal("no record written")
	}
	os.WriteFile(s.Path("other", "https://x.example/mcp"), data, 0o600)
	if r, _ := s.Load(ctx, "other", "https://x.example/mcp"); r != nil {
		t.Errorf("a record copied under another name was handed out: %+v", r)
	}
	if ok, err := s.Delete(ctx, "linear", "https://mcp.linear.app/mcp"); !ok || err != nil {
		t.Errorf("Delete = %v, %v", ok, err)
	}
	if ok, err := s.Delete(ctx, "linear", "https://mcp.linear.app/mcp"); ok || err != nil {
		t.Errorf("second Delete = %v, %v; want false, nil", ok, err)
	}
}

func TestDamagedFile(t *testing.T) {
	s, _ := Open(t.TempDir())
	s.ensureDir()
	os.WriteFile(s.Path("x", "https://x.example/mcp"), []byte("{not json"), 0o600)
	_, err := s.Load(ctxT(t), "x", "https://x.example/mcp")
	if err == nil || !strings.Contains(err.Error(), "mcp-hub logout x") {
		t.Errorf("Load of a damaged file: %v; want an error naming the fix", err)
	}
}

func TestFileName(t *testing.T) {
	tests := []struct{ server, prefix string }{
		{"github", "github-"},
		{"CON", "CON-"}, // reserved on Windows alone, not with the suffix
		{`a:b/c\d*e?f"g<h>i|j`, "a_b_c_d_e_f_g_h_i_j-"},
		{"dots.and spaces", "dots_and_spaces-"},
		{"ünïcode", "_n_code-"},
		{strings.Repeat("x", 100), strings.Repeat("x", 40) + "-"},
	}
	for _, tc := range tests {
		got := fileName(tc.server, "https://a.example/mcp")
		if !strings.HasPrefix(got, tc.prefix) || len(got) != len(tc.prefix)+16 {
			t.Errorf("fileName(%q) = %q, want %q + 16 hex digits", tc.server, got, tc.prefix)
		}
	}
	if fileName("a", "https://a.example/mcp") == fileName("a", "https://b.example/mcp") {
		t.Error("the same name at two URLs shares a file")
	}
}

// Updates from many goroutines and from another process are serialised:
// none is lost.
func TestConcurrentUpdates(t *testing.T) {
	state := t.TempDir()
	s, _ := Open(state)
	ctx := ctxT(t)
	const server, url = "srv", "https://srv.example/mcp"
	const perWorker, goroutines = 40, 4

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=count", "TOKENSTORE_ARGS="+strings.Join([]string{state, server, url, strconv.Itoa(perWorker)}, "\t"))
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range perWorker {
				if _, err := s.Update(ctx, server, url, increment); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper process: %v\n%s", err, out)
	}
	r, err := s.Load(ctx, server, url)
	if err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa((goroutines + 1) * perWorker); r.Token.AccessToken != want {
		t.Errorf("counter = %s after %s increments: updates were lost", r.Token.AccessToken, want)
	}
}

// While another process holds a record's lock, a write waits for it, and
// gives up with a clear error when its context ends first.
func TestLockAcrossProcesses(t *testing.T) {
	state := t.TempDir()
	s, _ := Open(state)
	const server, url = "srv", "https://srv.example/mcp"
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelper+"=hold", "TOKENSTORE_ARGS="+strings.Join([]string{state, server, url}, "\t"))
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		t.Fatalf("helper: %q", line)
	}

	short, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := s.Update(short, server, url, increment)
	if err == nil || !strings.Contains(err.Error(), "locked by another mcp-hub process") {
		t.Fatalf("Update while another process holds the lock: %v; want a lock error", err)
	}
	// Another record is not affected.
	if _, err := s.Update(short, "other", url, increment); err != nil {
		t.Errorf("another record: %v", err)
	}

	done := make(chan error, 1)
	go func() {
		_, err := s.Update(ctxT(t), server, url, increment)
		done <- err
	}()
	stdin.Close() // the helper releases the lock and exits
	if err := <-done; err != nil {
		t.Errorf("Update after the lock was released: %v", err)
	}
	cmd.Wait()
}

// A symlink planted at a record's lock or token file, pointing at a file
// elsewhere: Load, Update and Delete fail naming the link (or, for
// Delete, remove the link itself), and the target is neither created nor
// changed.
func TestSymlinksNotFollowed(t *testing.T) {
	t.Parallel()
	const server, url = "svc", "https://svc.example/mcp"
	tests := []struct {
		name   string
		path   func(s *Store) string
		target string // "" : a file that does not exist yet
	}{
		{"lock to missing", func(s *Store) string { return filepath.Join(s.dir, fileName(server, url)+".lock") }, ""},
		{"lock to existing", func(s *Store) string { return filepath.Join(s.dir, fileName(server, url)+".lock") }, "precious"},
		{"token to existing", func(s *Store) string { return s.Path(server, url) }, `{"server":"svc","url":"https://svc.example/mcp","token":{"access_token":"planted"}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _ := Open(t.TempDir())
			if err := s.ensureDir(); err != nil {
				t.Fatal(err)
			}
			target := filepath.Join(t.TempDir(), "target")
			if tc.target != "" {
				if err := os.WriteFile(target, []byte(tc.target), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(target, tc.path(s)); err != nil {
				t.Skipf("cannot make a symlink here: %v", err)
			}
			// Load of a record that does not exist takes no lock.
			if r, err := s.Load(ctxT(t), server, url); strings.HasPrefix(tc.name, "token") && (err == nil || !strings.Contains(err.Error(), "symbolic link")) {
				t.Errorf("Load = %+v, %v; want an error naming the symbolic link", r, err)
			}
			_, err := s.Update(ctxT(t), server, url, func(*Record) (*Record, error) {
				return &Record{Token: &Token{AccessToken: "new"}}, nil
			})
			if err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("Update = %v; want an error naming the symbolic link", err)
			}
			data, err := os.ReadFile(target)
			switch {
			case tc.target == "" && !os.IsNotExist(err):
				t.Errorf("the link's target was created (%v)", err)
			case tc.target != "" && string(data) != tc.target:
				t.Errorf("the link's target was changed: %q", data)
			}
			if st, err := os.Lstat(target); err == nil && st.Mode().Perm() != 0o644 {
				t.Errorf("the link's target mode changed to %v", st.Mode().Perm())
			}
		})
	}
}
