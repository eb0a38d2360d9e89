// Command hostile is a stdio MCP server that tries what a malicious server
// would, for the sandbox's end-to-end tests (cmd/mcp-hub/sandbox_e2e_test.go):
// each tool attempts one thing and says plainly whether it worked, "OK ..."
// or "DENIED ...", so the test asserts every refusal through the real hub.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

type args struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Addr    string `json:"addr"`
	URL     string `json:"url"`
	Proxy   bool   `json:"proxy"`
	Needle  string `json:"needle"`
	Name    string `json:"name"`
}

var tools = map[string]struct {
	desc string
	run  func(context.Context, args) string
}{
	"read_file":  {"Read the file at path (the user's SSH key, the hub's config, its token store).", readFile},
	"write_file": {"Write content to the file at path.", writeFile},
	"tcp":        {"Open a raw TCP connection to addr (host:port) and read what it says first.", dialTCP},
	"http_get":   {"GET url, through the proxy of the environment (proxy: true) or directly.", httpGet},
	"env":        {"Read the variable name of the environment, and look for needle in every process's environment under /proc.", findEnv},
	"whoami":     {"Say where the server is: HOME, working folder, uid.", whoami},
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "1.0.0"}, nil)
	for name, t := range tools {
		s.AddTool(&mcp.Tool{Name: name, Description: t.desc, InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var a args
				if len(req.Params.Arguments) > 0 {
					if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
						return nil, err
					}
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t.run(ctx, a)}}}, nil
			})
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}

func denied(err error) string { return "DENIED " + err.Error() }

func readFile(_ context.Context, a args) string {
	b, err := os.ReadFile(a.Path)
	if err != nil {
		return denied(err)
	}
	return "OK " + string(b)
}

func writeFile(_ context.Context, a args) string {
	if err := os.WriteFile(a.Path, []byte(a.Content), 0o644); err != nil {
		return denied(err)
	}
	return "OK wrote " + a.Path
}

func dialTCP(_ context.Context, a args) string {
	c, err := net.DialTimeout("tcp", a.Addr, 5*time.Second)
	if err != nil {
		return denied(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(2 * time.Second))
	b := make([]byte, 256)
	n, _ := c.Read(b)
	return "OK connected: " + string(b[:n])
}

func httpGet(ctx context.Context, a args) string {
	tr := &http.Transport{}
	if a.Proxy {
		// Always the proxy, loopback included (ProxyFromEnvironment
		// would go direct to 127.0.0.1).
		tr.Proxy = func(*http.Request) (*url.URL, error) { return url.Parse(os.Getenv("HTTP_PROXY")) }
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		return denied(err)
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return denied(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("DENIED status %d: %s", resp.StatusCode, b)
	}
	return "OK " + string(b)
}

func findEnv(_ context.Context, a args) string {
	if v, ok := os.LookupEnv(a.Name); ok {
		return "OK own environment: " + v
	}
	files, _ := filepath.Glob("/proc/*/environ")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && a.Needle != "" && strings.Contains(string(b), a.Needle) {
			return "OK found in " + f
		}
	}
	return fmt.Sprintf("DENIED not in its environment nor in the %d environments of /proc", len(files))
}

func whoami(context.Context, args) string {
	wd, _ := os.Getwd()
	return fmt.Sprintf("OK HOME=%s cwd=%s uid=%d HTTPS_PROXY=%s", os.Getenv("HOME"), wd, os.Getuid(), os.Getenv("HTTPS_PROXY"))
}
