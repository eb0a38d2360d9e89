package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// MaxForwardConns bounds the connections the in-sandbox forwarder relays at
// once; the hub's proxy has its own bound (MaxProxyConns).
const MaxForwardConns = MaxProxyConns

// RunHelper is `mcp-hub sandbox-exec SPEC COMMAND [ARG...]`, the first
// program in a Linux sandbox: it applies Landlock, starts the forwarder to
// the hub's proxy when the server has a network, and runs the server.
// Without a forwarder it becomes the server (exec), so it costs nothing
// per call; with one it stays, as the server's parent, relaying only
// proxy connections (the server's stdin and stdout are its own).
func RunHelper(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, errNoHelperSpec)
		return 2
	}
	var spec helperSpec
	if err := json.Unmarshal([]byte(args[0]), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-hub sandbox-exec:", err)
		return 2
	}
	var ln net.Listener
	if spec.Forward != "" {
		var err error
		if ln, err = net.Listen("tcp", spec.Forward); err != nil {
			fmt.Fprintln(os.Stderr, "mcp-hub sandbox-exec: the proxy forwarder:", err)
			return 1
		}
	}
	// Landlock after the listener (it binds no path) and before the
	// server: the restriction is inherited and cannot be lifted.
	if err := spec.Landlock.apply(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-hub sandbox-exec: landlock:", err)
		return 1
	}
	if ln == nil {
		err := syscall.Exec(args[1], args[1:], os.Environ())
		fmt.Fprintln(os.Stderr, "mcp-hub sandbox-exec: running the server:", err)
		return 127
	}
	go forward(ln, spec.Socket)
	cmd := exec.Command(args[1], args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-hub sandbox-exec: running the server:", err)
		return 127
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

// forward relays each connection to ln to the hub's proxy at socket.
func forward(ln net.Listener, socket string) {
	slots := make(chan struct{}, MaxForwardConns)
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		slots <- struct{}{}
		go func() {
			defer func() { <-slots }()
			defer c.Close()
			up, err := net.DialTimeout("unix", socket, 5*time.Second)
			if err != nil {
				return
			}
			defer up.Close()
			done := make(chan struct{})
			go func() {
				io.Copy(up, c)
				up.(*net.UnixConn).CloseWrite()
				close(done)
			}()
			io.Copy(c, up)
			c.Close()
			<-done
		}()
	}
}

// helperSpec is what the hub tells the helper, as its first argument
// (JSON). Paths are as seen inside the sandbox.
type helperSpec struct {
	// Forward, if set, is the loopback address where the helper listens
	// for the server's proxy connections, relaying each to Socket (the
	// hub's proxy).
	Forward string `json:"forward,omitempty"`
	Socket  string `json:"socket,omitempty"`
	// Landlock, if set, restricts the file system again from inside.
	Landlock *landlockRules `json:"landlock,omitempty"`
}

// landlockRules are the paths the server may read (and run), and read and
// write, under Landlock: the same as its mounts, so that a flaw in one
// layer is not enough.
type landlockRules struct {
	Read  []string `json:"read"`
	Write []string `json:"write"`
}

// landlockFor is the rules matching p's mounts.
func landlockFor(p *plan) *landlockRules {
	l := &landlockRules{
		Read:  append(append([]string{"/proc", helperAt, netDirAt}, systemDirs()...), sysDirs()...),
		Write: []string{"/tmp", "/dev", p.homeAt},
	}
	l.Read = append(l.Read, p.readable...)
	l.Write = append(l.Write, p.writable...)
	for _, al := range p.aliases {
		if al.write {
			l.Write = append(l.Write, al.name)
		} else {
			l.Read = append(l.Read, al.name)
		}
	}
	return l
}
