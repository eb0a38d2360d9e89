//go:build linux

package e2e

// Hot reload end to end (issue 13, acceptance 3): a real `mcp-hub serve`
// (this test binary re-executed), real stdio fixture servers, a go-sdk
// client with a list_changed handler, edits to the real config file.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"

	"github.com/mcp-hub/mcp-hub/gateway"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// reloadTimeout is the acceptance bound: a server added to the file is
// listed, with list_changed, within this long of the write.
const reloadTimeout = 5 * time.Second

// TestHotReload: over streamable HTTP and over stdio, with the file
// polled (and replaced by rename, in a directory reached through a
// symlink) or re-read on SIGHUP:
//   - a server added to the file appears with list_changed within 5 s;
//   - the unchanged stdio server keeps its process throughout;
//   - a broken edit is logged with the message `config check` gives,
//     and everything keeps serving;
//   - a removed stdio server's tools leave (list_changed) and its
//     process ends.
func TestHotReload(t *testing.T) {
	fx := fixture.Build(t)
	tests := []struct {
		name     string
		http     bool
		interval string // --watch-interval
		sighup   bool   // trigger each reload with SIGHUP instead of waiting for the poll
		symlink  bool   // --config goes through a symlinked directory
	}{
		{name: "http, file watched", http: true, interval: "50ms", symlink: true},
		{name: "stdio, file watched", interval: "50ms"},
		{name: "stdio, SIGHUP", interval: "0", sighup: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			real := filepath.Join(dir, "real")
			if err := os.Mkdir(real, 0o755); err != nil {
				t.Fatal(err)
			}
			cfgDir := real
			if tt.symlink {
				cfgDir = filepath.Join(dir, "link")
				if err := os.Symlink(real, cfgDir); err != nil {
					t.Fatal(err)
				}
			}
			cfgPath := filepath.Join(cfgDir, "hub.yaml")
			server := func(name, tool string) string {
				return fmt.Sprintf("  %s:\n    command: %q\n    args: [-name, %s, -tools, %s]\n", name, fx, name, tool)
			}
			write := func(content string) {
				t.Helper()
				// As editors do: a new file renamed over the old one.
				tmp := filepath.Join(real, ".hub.yaml.tmp")
				if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Rename(tmp, filepath.Join(real, "hub.yaml")); err != nil {
					t.Fatal(err)
				}
			}
			write("servers:\n" + server("keep", "alpha") + server("gone", "beta"))

			hubLog := fixture.NewLog(t)
			h := startReloadHub(t, cfgPath, tt.http, tt.interval, hubLog)
			trigger := func() {
				if tt.sighup {
					if err := h.cmd.Process.Signal(syscall.SIGHUP); err != nil {
						t.Fatal(err)
					}
				}
			}
			h.waitTools(t, 30*time.Second, "both servers listed", func(names []string) bool {
				return slices.Contains(names, "keep__alpha") && slices.Contains(names, "gone__beta")
			})
			keepPID, gonePID := h.childPID(t, "keep"), h.childPID(t, "gone")

			// 1. A server added to the file appears with list_changed within 5 s.
			start := time.Now()
			write("servers:\n" + server("keep", "alpha") + server("gone", "beta") + server("added", "gamma"))
			trigger()
			h.waitTools(t, reloadTimeout, "added__gamma after list_changed", func(names []string) bool {
				return slices.Contains(names, "added__gamma")
			})
			t.Logf("server added: listed %v after the write", time.Since(start).Round(time.Millisecond))
			if got := h.childPID(t, "keep"); got != keepPID {
				t.Errorf("unchanged server keep was restarted: pid %d -> %d", keepPID, got)
			}
			h.callOK(t, "added__gamma")

			// 2. A broken edit: the message of `config check`, and everything serving.
			broken := "servers:\n" + server("keep", "alpha") + "    comand: typo\n"
			out, code := runMain(t, nil, "config", "check", "--config", fixture.WriteFile(t, "hub.yaml", broken))
			if code != 2 {
				t.Fatalf("config check of the broken file: exit %d, want 2\n%s", code, out)
			}
			want := strings.TrimSpace(strings.SplitN(strings.TrimPrefix(out, "mcp-hub: config error:\n"), "\n", 2)[0])
			want = strings.TrimPrefix(want, filepath.Dir(want[:strings.Index(want, "hub.yaml")]))
			write(broken)
			trigger()
			hubLog.WaitFor(t, "the reload error in the hub log: "+want, 10*time.Second, func(s string) bool {
				return strings.Contains(s, "config not applied, the running config stays: config error:") && strings.Contains(s, want)
			})
			for _, tool := range []string{"keep__alpha", "gone__beta", "added__gamma"} {
				h.callOK(t, tool)
			}
			if got := h.childPID(t, "keep"); got != keepPID {
				t.Errorf("a broken edit restarted keep: pid %d -> %d", keepPID, got)
			}
			if h.http {
				st := h.health(t).Config
				if !strings.Contains(st.LastReloadError, "comand") || st.Reloads != 1 {
					t.Errorf("/healthz config = %+v, want 1 reload and the broken edit's error", st)
				}
			}

			// 3. A removed stdio server's tools leave and its process ends.
			write("servers:\n" + server("keep", "alpha") + server("added", "gamma"))
			trigger()
			h.waitTools(t, reloadTimeout, "gone__beta leaves after list_changed", func(names []string) bool {
				return !slices.Contains(names, "gone__beta") && slices.Contains(names, "keep__alpha")
			})
			fixture.Eventually(t, 10*time.Second, fmt.Sprintf("removed server's process %d ends", gonePID), func() bool {
				ppid, _ := feStat(gonePID)
				return !feAlive(gonePID) || ppid != h.cmd.Process.Pid
			})
			if got := h.childPID(t, "keep"); got != keepPID {
				t.Errorf("unchanged server keep was restarted: pid %d -> %d", keepPID, got)
			}
			h.callOK(t, "keep__alpha")
			if h.http {
				st := h.health(t).Config
				if st.LastReloadError != "" || st.Reloads != 2 || time.Since(st.AppliedAt) > time.Minute {
					t.Errorf("/healthz config = %+v, want 2 reloads, no error, applied just now", st)
				}
			}
		})
	}
}

// reloadHub is a running `mcp-hub serve` and a client session on it.
type reloadHub struct {
	cmd     *exec.Cmd
	http    bool
	addr    string
	cs      *mcp.ClientSession
	changed chan struct{} // one per tools/list_changed
}

// startReloadHub runs `mcp-hub --config cfgPath serve --watch-interval
// interval` over HTTP or stdio and connects a client to it.
func startReloadHub(t *testing.T, cfgPath string, useHTTP bool, interval string, log *fixture.Log) *reloadHub {
	t.Helper()
	self, err := hubBinary()
	if err != nil {
		t.Fatal(err)
	}
	h := &reloadHub{http: useHTTP, changed: make(chan struct{}, 64)}
	client := mcp.NewClient(&mcp.Implementation{Name: "reload-test", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			select {
			case h.changed <- struct{}{}:
			default:
			}
		},
	})
	args := []string{"--config", cfgPath, "serve", "--watch-interval", interval}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if !useHTTP {
		h.cmd = exec.Command(self, args...)
		h.cmd.Env = append(os.Environ(), envAsMain+"=1")
		h.cmd.Stderr = log
		h.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: h.cmd}, fixture.Legacy())
		if err != nil {
			t.Fatalf("connect to mcp-hub over stdio: %v\n%s", err, log)
		}
		h.cs = cs
		t.Cleanup(func() { cs.Close() })
		return h
	}
	h.addr = freeAddr(t)
	c := startChild(t, "hub", []string{envAsMain + "=1"}, self, append(args, "--http", h.addr)...)
	h.cmd = c.cmd
	go func() { // the child's log, into the test's
		for off := 0; !c.exited(); {
			data, _ := os.ReadFile(c.logPath)
			if len(data) > off {
				log.Write(data[off:])
				off = len(data)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	var cs *mcp.ClientSession
	fixture.Eventually(t, 60*time.Second, "the hub answers at "+h.addr, func() bool {
		cs, err = client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + h.addr + "/mcp", MaxRetries: -1}, fixture.Legacy())
		return err == nil
	})
	h.cs = cs
	t.Cleanup(func() { cs.Close() })
	return h
}

// waitTools lists the tools, and again after each list_changed, until
// cond holds or d passes.
func (h *reloadHub) waitTools(t *testing.T, d time.Duration, what string, cond func([]string) bool) {
	t.Helper()
	timeout := time.After(d)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := h.cs.ListTools(ctx, nil)
		cancel()
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		if cond(names) {
			return
		}
		select {
		case <-h.changed:
		case <-timeout:
			t.Fatalf("no list_changed bringing %s within %s; tools: %v", what, d, names)
		}
	}
}

// callOK calls an echo tool of the fixture and fails the test unless it works.
func (h *reloadHub) callOK(t *testing.T, tool string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("call %s: %v", tool, fixture.Result(t, res).Content)
	}
}

// childPID is the process id of the fixture server named name, a child of
// the hub.
func (h *reloadHub) childPID(t *testing.T, name string) int {
	t.Helper()
	var pid int
	fixture.Eventually(t, 10*time.Second, "a process of server "+name, func() bool {
		for _, p := range feChildren(h.cmd.Process.Pid) {
			cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline")
			if strings.Contains(string(cmdline), "\x00-name\x00"+name+"\x00") {
				pid = p
				return true
			}
		}
		return false
	})
	return pid
}

func (h *reloadHub) health(t *testing.T) gateway.Health {
	t.Helper()
	resp, err := http.Get("http://" + h.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out gateway.Health
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}
