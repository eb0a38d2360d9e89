package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

// TestBwrapArgs checks the profile turned into bubblewrap's command line:
// namespaces, the private home at the user's home path, what is given,
// and the hub's files masked after everything else.
func TestBwrapArgs(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, "state")
	given := filepath.Join(root, "given")
	out := filepath.Join(root, "out")
	cfgFile := filepath.Join(given, "hub.yaml")
	for _, d := range []string{state, given, out} {
		os.MkdirAll(d, 0o700)
	}
	os.WriteFile(cfgFile, []byte("servers: {}"), 0o600)
	t.Setenv("HOME", filepath.Join(root, "home"))
	r := New(Options{Hidden: []string{cfgFile, state}, StateDir: state})
	cmd := exec.Command("/bin/true", "--root="+given, "relative", "/nonexistent", "/", filepath.Join(root, "home"))
	os.MkdirAll(filepath.Join(root, "home"), 0o700)
	p, err := r.plan("fs", &config.Sandbox{Enabled: true, Write: []string{out}}, cmd)
	if err != nil {
		t.Fatal(err)
	}
	a := strings.Join(bwrapArgs(p, "/usr/bin/mcp-hub", ""), " ")
	for _, want := range []string{
		"--die-with-parent", "--unshare-all", "--cap-drop ALL",
		"--ro-bind-try /etc /etc", "--tmpfs /tmp",
		"--bind " + p.home + " " + filepath.Join(root, "home"),
		"--ro-bind " + given + " " + given, // named by an argument
		"--bind " + out + " " + out,
		"--ro-bind /dev/null " + cfgFile, // masked though inside a given folder
		"--ro-bind /dev/null /etc/shadow",
		"--perms 0555 --dir " + filepath.Dir(root) + " ", // the folders holding mounts in /tmp: read-only
		"--remount-ro / --chdir",
	} {
		if !strings.Contains(a, want) {
			t.Errorf("bwrap args lack %q:\n%s", want, a)
		}
	}
	if strings.Contains(a, "--share-net") || strings.Contains(a, "/nonexistent") || strings.Contains(a, "--ro-bind / /") || strings.Contains(a, "--ro-bind "+filepath.Join(root, "home")) {
		t.Errorf("unexpected: %s", a)
	}
	if strings.Index(a, "/dev/null "+cfgFile) < strings.Index(a, "--ro-bind "+given) {
		t.Error("the mask must come after the mount it covers")
	}
	if !strings.HasPrefix(p.home, state) || !slices.Contains(p.hidden, state) {
		t.Errorf("home %s should be under the (hidden) state folder %s", p.home, state)
	}

	// Opening the hub's own files is refused, not silently masked.
	if _, err := r.plan("fs", &config.Sandbox{Enabled: true, Write: []string{root}}, cmd); err == nil || !strings.Contains(err.Error(), "hub's own files") {
		t.Errorf("write over the state folder: %v, want a refusal", err)
	}
	if _, err := r.plan("fs", &config.Sandbox{Enabled: true, Read: []string{cfgFile}}, cmd); err == nil {
		t.Error("read of the hub's config: want a refusal")
	}
}

func TestWrapWithoutBwrap(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	r := New(Options{StateDir: t.TempDir()})
	_, err := r.Wrap(t.Context(), "fs", &config.Sandbox{Enabled: true}, exec.Command("/bin/true"))
	if err == nil || !strings.Contains(err.Error(), "apt-get install bubblewrap") || !strings.Contains(err.Error(), "server fs") {
		t.Fatalf("Wrap without bwrap = %v, want an error naming the server and what to install", err)
	}
}

// TestBwrapAliases: a folder given by a symbolic link shows at the link's
// name too, and the hub's file inside it is masked there as well.
func TestBwrapAliases(t *testing.T) {
	root := t.TempDir()
	state, data := filepath.Join(root, "state"), filepath.Join(root, "data")
	os.MkdirAll(state, 0o700)
	os.MkdirAll(data, 0o700)
	cfgFile := filepath.Join(data, "hub.yaml")
	os.WriteFile(cfgFile, []byte("servers: {}"), 0o600)
	link := filepath.Join(root, "link")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", filepath.Join(root, "home"))
	r := New(Options{Hidden: []string{cfgFile, state}, StateDir: state})
	p, err := r.plan("fs", &config.Sandbox{Enabled: true, Read: []string{link}}, exec.Command("/bin/true"))
	if err != nil {
		t.Fatal(err)
	}
	a := strings.Join(bwrapArgs(p, "/usr/bin/mcp-hub", ""), " ")
	for _, want := range []string{
		"--ro-bind " + data + " " + data,
		"--ro-bind " + data + " " + link,
		"--ro-bind /dev/null " + cfgFile,
		"--ro-bind /dev/null " + filepath.Join(link, "hub.yaml"),
	} {
		if !strings.Contains(a, want) {
			t.Errorf("bwrap args lack %q:\n%s", want, a)
		}
	}
}
