package config

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestSandboxConfig: `sandbox: true | false | {network, read, write}` per
// stdio server, sandbox_default for the others, paths made absolute.
func TestSandboxConfig(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX paths")
	}
	home, _ := os.UserHomeDir()
	doc := `sandbox_default:
  network: [registry.npmjs.org]
servers:
  plain:
    command: a
  off:
    command: b
    sandbox: false
  on:
    command: c
    sandbox: true
  fs:
    command: d
    sandbox:
      network: ["api.example.com:8443", "*.example.org"]
      read: [~/notes]
      write: [/srv/site]
  web:
    url: http://127.0.0.1:1/mcp
`
	cfg, err := parseConfig("hub.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Servers
	if b := s["plain"].Sandbox; !b.On() || !slices.Equal(b.Network, []string{"registry.npmjs.org"}) {
		t.Errorf("plain: %+v, want sandbox_default", b)
	}
	if b := s["off"].Sandbox; b.On() || b.Summary() != "off" {
		t.Errorf("off: %+v", b)
	}
	if b := s["on"].Sandbox; !b.On() || len(b.Network) > 0 || b.Summary() != "on, no network" {
		t.Errorf("on: %+v %q", b, b.Summary())
	}
	if b := s["fs"].Sandbox; !b.On() || b.Read[0] != filepath.Join(home, "notes") || b.Write[0] != "/srv/site" || len(b.Network) != 2 {
		t.Errorf("fs: %+v", b)
	}
	if s["web"].Sandbox != nil {
		t.Errorf("web: sandbox_default applies to stdio servers only: %+v", s["web"].Sandbox)
	}
}

func TestSandboxConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, doc, want string }{
		{"relative path", "servers:\n  a:\n    command: x\n    sandbox:\n      write: [out]\n",
			"hub.yaml:5: server 'a': sandbox.write: \"out\" is not an absolute path"},
		{"url server", "servers:\n  a:\n    url: http://h/mcp\n    sandbox: true\n",
			"hub.yaml:4: server 'a': 'sandbox' applies to stdio servers (command) only"},
		{"bad port", "servers:\n  a:\n    command: x\n    sandbox: {network: [\"h:99999\"]}\n",
			"hub.yaml:4: server 'a': sandbox.network: network entry \"h:99999\": port \"99999\" is not 1-65535"},
		{"scheme", "servers:\n  a:\n    command: x\n    sandbox: {network: [\"https://h\"]}\n",
			"not a host: write it like api.example.com"},
		{"wide wildcard", "servers:\n  a:\n    command: x\n    sandbox: {network: [\"*.com\"]}\n",
			"too wide"},
		{"inner wildcard", "servers:\n  a:\n    command: x\n    sandbox: {network: [\"api.*.com\"]}\n",
			"only allowed as a leading *."},
		{"unknown key", "servers:\n  a:\n    command: x\n    sandbox: {netwrok: [h]}\n",
			"sandbox has no key 'netwrok'"},
		{"not a bool", "servers:\n  a:\n    command: x\n    sandbox: yes-please\n",
			"sandbox takes true, false or a mapping"},
		{"default", "sandbox_default:\n  read: [rel]\nservers:\n  a:\n    command: x\n",
			"hub.yaml:2: sandbox_default: sandbox.read: \"rel\" is not an absolute path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("hub.yaml", []byte(tc.doc))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseNetworkEntry(t *testing.T) {
	for in, want := range map[string]NetworkEntry{
		"API.Example.com":   {Host: "api.example.com"},
		"h:8080":            {Host: "h", Port: 8080},
		"*.example.com":     {Host: "example.com", Wildcard: true},
		"*.example.com:444": {Host: "example.com", Wildcard: true, Port: 444},
		"[::1]:9000":        {Host: "::1", Port: 9000},
		"10.0.0.1":          {Host: "10.0.0.1"},
	} {
		got, err := ParseNetworkEntry(in)
		if err != nil || got != want {
			t.Errorf("ParseNetworkEntry(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
}
