package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestLandlock applies the helper's Landlock rules in a child process (this
// test binary again) and checks, from inside, that a path outside them is
// refused even though nothing else (no mount) hides it, while the rules'
// read and write paths work.
func TestLandlock(t *testing.T) {
	if os.Getenv("SANDBOX_LANDLOCK_CHILD") == "1" {
		landlockChild()
		return
	}
	if abi, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION); errno != 0 || abi < 1 {
		t.Skip("this kernel has no Landlock")
	}
	root := t.TempDir()
	readable, writable, outside := filepath.Join(root, "r"), filepath.Join(root, "w"), filepath.Join(root, "o")
	for _, d := range []string{readable, writable, outside} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "f"), []byte("content of "+d), 0o644)
	}
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^TestLandlock$", "-test.v")
	cmd.Env = append(os.Environ(), "SANDBOX_LANDLOCK_CHILD=1", "LL_R="+readable, "LL_W="+writable, "LL_O="+outside)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	for _, want := range []string{
		"read readable: ok", "write writable: ok", "read outside: denied", "write readable: denied", "read /etc/hostname: denied",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("child output lacks %q:\n%s", want, out)
		}
	}
}

func landlockChild() {
	r, w, o := os.Getenv("LL_R"), os.Getenv("LL_W"), os.Getenv("LL_O")
	rules := &landlockRules{Read: append([]string{r}, "/usr", "/lib", "/lib64", "/proc"), Write: []string{w}}
	if err := rules.apply(); err != nil {
		fmt.Println("apply:", err)
		os.Exit(1)
	}
	say := func(what string, err error) {
		if err != nil {
			fmt.Printf("%s: denied (%v)\n", what, err)
		} else {
			fmt.Printf("%s: ok\n", what)
		}
	}
	_, err := os.ReadFile(filepath.Join(r, "f"))
	say("read readable", err)
	say("write writable", os.WriteFile(filepath.Join(w, "new"), []byte("x"), 0o644))
	_, err = os.ReadFile(filepath.Join(o, "f"))
	say("read outside", err)
	say("write readable", os.WriteFile(filepath.Join(r, "new"), []byte("x"), 0o644))
	_, err = os.ReadFile("/etc/hostname")
	say("read /etc/hostname", err)
	os.Exit(0)
}
