//go:build linux

// Shared harness for the end-to-end tests of this package (conformance and the
// proxy benchmark): building go-sdk's conformance everything-server, running
// child processes that never outlive the test, and starting the hub from the
// test binary itself (see TestMain).

package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

const (
	sdkModule     = "github.com/modelcontextprotocol/go-sdk"
	everythingPkg = sdkModule + "/conformance/everything-server"
	// probeTool is a tool of everything-server; the hub counts as ready when it
	// lists it (the hub may serve before its upstreams have connected).
	probeTool = "test_simple_text"
	// hubReadyTimeout is generous: under -race on 2 shared cores a cold start
	// of the hub plus its upstream can take several seconds.
	hubReadyTimeout = 90 * time.Second
)

var everything struct {
	once sync.Once
	path string
	err  error
}

// everythingServer returns the path of go-sdk's conformance everything-server,
// built once per test process at the go-sdk version of our go.mod.
func everythingServer(tb testing.TB) string {
	tb.Helper()
	everything.once.Do(func() {
		removeStaleBuildDirs()
		dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", buildDirPrefix, os.Getpid()))
		if err != nil {
			everything.err = err
			return
		}
		testMainCleanups = append(testMainCleanups, func() { os.RemoveAll(dir) })
		everything.path, everything.err = buildPublishedSDK(dir, everythingPkg)
	})
	if everything.err != nil {
		tb.Fatalf("building %s: %v", everythingPkg, everything.err)
	}
	return everything.path
}

// buildDirPrefix names the temporary build folders; the pid after it tells
// whether the test process that made one is still alive.
const buildDirPrefix = "mcp-hub-everything-"

// removeStaleBuildDirs removes the build folders of test processes that died
// without running TestMain's cleanup (killed by the -timeout panic, say).
func removeStaleBuildDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), buildDirPrefix+"*-*"))
	for _, dir := range dirs {
		pidText, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(dir), buildDirPrefix), "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(dir)
		}
	}
}

// buildPublishedSDK builds a program of go-sdk as published (the
// everything-server, the everything-client), at the version of our go.mod,
// whose tool directive names both: they stand for the servers and clients
// our users run, so they must not be our patched copy
// (third_party/README.md), which our module imports under its own path.
func buildPublishedSDK(dir, pkg string) (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	args := []string{"build", "-o", out}
	if raceEnabled() {
		args = append(args, "-race")
	}
	args = append(args, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if output, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, output)
	}
	return out, nil
}

// testdataBuilds holds the programs of testdata/ built by this test process,
// by name: a *testdataBuild each.
var testdataBuilds sync.Map

type testdataBuild struct {
	once sync.Once
	path string
	err  error
}

// testdataProgram builds testdata/<name> (a program written for the tests:
// a hostile server, the benchmark's floor proxy) once per test process and
// returns its path.
func testdataProgram(tb testing.TB, name string) string {
	tb.Helper()
	v, _ := testdataBuilds.LoadOrStore(name, new(testdataBuild))
	b := v.(*testdataBuild)
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", fmt.Sprintf("%s%d-", buildDirPrefix, os.Getpid()))
		if err != nil {
			b.err = err
			return
		}
		testMainCleanups = append(testMainCleanups, func() { os.RemoveAll(dir) })
		exe := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", exe, "./testdata/"+name)
		cmd.Dir = ".."
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build ./testdata/%s: %v\n%s", name, err, out)
			return
		}
		b.path = exe
	})
	if b.err != nil {
		tb.Fatal(b.err)
	}
	return b.path
}

// freeAddr returns a 127.0.0.1 address with a port that was free a moment ago.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("picking a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startedPIDs holds the processes the harness started itself, so the orphan
// check after a hub exits does not mistake them for the hub's children.
var startedPIDs sync.Map

// child is a process started by a test. It runs in its own process group and
// is stopped (SIGTERM, then SIGKILL to the group) when the test ends.
type child struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	done    chan struct{}
	waitErr error
}

func startChild(tb testing.TB, name string, env []string, bin string, args ...string) *child {
	tb.Helper()
	logPath := filepath.Join(tb.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		tb.Fatal(err)
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	// A file, not a pipe: grandchildren that inherit it cannot block Wait.
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("starting %s: %v", name, err)
	}
	startedPIDs.Store(cmd.Process.Pid, true)
	c := &child{name: name, cmd: cmd, logPath: logPath, done: make(chan struct{})}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.done)
	}()
	tb.Cleanup(c.stop)
	return c
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop asks the process to exit, as a user's Ctrl-C or a supervisor would, and
// kills its process group if it does not within a few seconds.
func (c *child) stop() {
	if !c.exited() {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
		}
	}
	// Anything left in the group (the process itself if it ignored SIGTERM,
	// or a grandchild that did not move to its own group) dies now.
	_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
	<-c.done
}

// logTail returns the last n lines the process wrote to stdout/stderr.
func (c *child) logTail(n int) string {
	data, err := os.ReadFile(c.logPath)
	if err != nil {
		return fmt.Sprintf("(reading %s: %v)", c.logPath, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("... (%d earlier lines in %s)", len(lines)-n, c.logPath)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// processesOf lists running processes (zombies excluded) whose executable is
// exe and that the harness did not start itself.
func processesOf(exe string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, ours := startedPIDs.Load(pid); ours {
			continue
		}
		if target, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && target == exe {
			pids = append(pids, pid)
		}
	}
	return pids
}

// startEverythingHTTP runs everything-server over stateful streamable HTTP
// (the setup in which it passes all 40 checks directly) and returns its URL.
func startEverythingHTTP(tb testing.TB, bin, name string) (url string, c *child) {
	tb.Helper()
	return startEverythingServer(tb, bin, name, "-stateless=false")
}

// startEverythingServer runs everything-server over streamable HTTP with
// the given -stateless flag and waits until it answers at the URL it returns.
func startEverythingServer(tb testing.TB, bin, name, statelessFlag string) (url string, c *child) {
	tb.Helper()
	addr := freeAddr(tb)
	c = startChild(tb, name, nil, bin, "-http="+addr, statelessFlag)
	url = "http://" + addr + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := waitMCPReady(ctx, url, c); err != nil {
		tb.Fatalf("%s did not become ready at %s: %v\n%s", name, url, err, c.logTail(40))
	}
	return url, c
}

// startHub runs `mcp-hub --config cfgYAML serve --http ADDR` (this test binary
// standing in for mcp-hub) and waits until its tools/list shows the upstream's
// tools. upstreamExe, if set, is the executable of a stdio upstream the hub
// starts: when the hub has stopped, none of those may be left running.
func startHub(tb testing.TB, name, cfgYAML, upstreamExe string) (url string, c *child) {
	tb.Helper()
	cfgPath := filepath.Join(tb.TempDir(), "hub.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfgYAML), 0o644); err != nil {
		tb.Fatal(err)
	}
	self, err := hubBinary()
	if err != nil {
		tb.Fatal(err)
	}
	addr := freeAddr(tb)
	if upstreamExe != "" {
		// Registered before startChild so it runs after the hub was stopped
		// (cleanups run last-in first-out).
		tb.Cleanup(func() { checkNoOrphans(tb, name, upstreamExe) })
	}
	// --config is a global flag of the CLI: it goes before the command.
	c = startChild(tb, name, []string{envAsMain + "=1"}, self, "--config", cfgPath, "serve", "--http", addr)
	url = "http://" + addr + "/mcp"
	ctx, cancel := context.WithTimeout(context.Background(), hubReadyTimeout)
	defer cancel()
	if err := waitMCPReady(ctx, url, c); err != nil {
		tb.Fatalf("hub (%s) did not become ready at %s with tool %q listed: %v\nconfig:\n%s\nhub log:\n%s",
			name, url, probeTool, err, cfgYAML, c.logTail(60))
	}
	return url, c
}

// checkNoOrphans fails the test if a stdio upstream of a stopped hub is still
// running (child processes die with the hub), then kills it.
func checkNoOrphans(tb testing.TB, hubName, exe string) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		pids := processesOf(exe)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Errorf("%s: stdio upstream %s still running 10s after the hub exited (pids %v): child processes must die with the hub", hubName, exe, pids)
			for _, pid := range pids {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitMCPReady polls url until an MCP session can be opened there and its
// tools/list contains probeTool, or until ctx ends or the process exits.
func waitMCPReady(ctx context.Context, url string, c *child) error {
	var last error
	for {
		if c.exited() {
			return fmt.Errorf("process exited (%v)", c.waitErr)
		}
		last = probeOnce(ctx, url)
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; last attempt: %v", ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func probeOnce(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-hub-test-probe", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             url,
		HTTPClient:           &http.Client{Timeout: 10 * time.Second},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		if tool.Name == probeTool {
			return nil
		}
		names = append(names, tool.Name)
	}
	return fmt.Errorf("tools/list has no %q yet (has %v)", probeTool, names)
}
