package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Sandbox is a stdio server's `sandbox:` (or the top-level
// `sandbox_default:`): `true`, `false`, or a mapping that turns the
// sandbox on and opens it a little. Package sandbox enforces it.
//
//	sandbox: true                      # the default profile: no network, no home
//	sandbox:
//	  network: [api.github.com, "127.0.0.1:8080", "*.googleapis.com"]
//	  read: [~/notes]
//	  write: [~/projects/site]
type Sandbox struct {
	// Enabled is false only for `sandbox: false`, which keeps a server
	// out of sandbox_default.
	Enabled bool `yaml:"-" json:"enabled"`
	// Network lists what the server may reach through the hub's proxy:
	// `host` (ports 80 and 443), `host:port` (that port only) or
	// `*.domain` (its subdomains, 80 and 443; `*.domain:port` too).
	// Empty: no network at all.
	Network []string `yaml:"network,omitempty" json:"network,omitempty"`
	// Read and Write are extra paths the server may read, or read and
	// write: absolute, or under ~ (the user's home). Validation makes
	// them absolute and clean.
	Read  []string `yaml:"read,omitempty" json:"read,omitempty"`
	Write []string `yaml:"write,omitempty" json:"write,omitempty"`
}

// UnmarshalYAML takes a boolean or a mapping of network, read and write.
func (s *Sandbox) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("line %d: sandbox takes true, false or a mapping of network, read and write, not %q", n.Line, n.Value)
		}
		*s = Sandbox{Enabled: b}
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: sandbox takes true, false or a mapping of network, read and write", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i].Value; k {
		case "network", "read", "write":
		default:
			return fmt.Errorf("line %d: sandbox has no key '%s': it takes network, read and write", n.Content[i].Line, k)
		}
	}
	type plain Sandbox // without this method
	var p plain
	if err := n.Decode(&p); err != nil {
		return fmt.Errorf("line %d: sandbox: network, read and write are lists of strings (%v)", n.Line, err)
	}
	*s = Sandbox(p)
	s.Enabled = true
	return nil
}

// On reports whether s asks for a sandbox.
func (s *Sandbox) On() bool { return s != nil && s.Enabled }

// NetworkEntry is one parsed `network` entry.
type NetworkEntry struct {
	// Host is a lower-case host name or IP address; for a wildcard, the
	// domain under which any subdomain matches (not the domain itself).
	Host     string
	Wildcard bool
	// Port is the one port allowed; 0 means 80 and 443.
	Port int
}

// String is the entry as it is written in config.
func (e NetworkEntry) String() string {
	h := e.Host
	if e.Wildcard {
		h = "*." + h
	}
	if e.Port == 0 {
		return h
	}
	return net.JoinHostPort(h, strconv.Itoa(e.Port))
}

// ParseNetworkEntry reads `host`, `host:port`, `*.domain`,
// `*.domain:port`, or an IP address (IPv6 in brackets with a port).
func ParseNetworkEntry(s string) (NetworkEntry, error) {
	var e NetworkEntry
	raw := strings.TrimSpace(s)
	if raw == "" {
		return e, errors.New("an empty network entry")
	}
	if strings.Contains(raw, "/") || strings.Contains(raw, "@") {
		return e, fmt.Errorf("network entry %q is not a host: write it like api.example.com, api.example.com:8443 or *.example.com (no scheme, no path)", s)
	}
	host := raw
	if h, p, err := net.SplitHostPort(raw); err == nil {
		port, perr := strconv.Atoi(p)
		if perr != nil || port < 1 || port > 65535 {
			return e, fmt.Errorf("network entry %q: port %q is not 1-65535", s, p)
		}
		host, e.Port = h, port
	} else if strings.Count(raw, ":") == 1 {
		return e, fmt.Errorf("network entry %q: %v", s, err)
	}
	host = strings.ToLower(strings.Trim(host, "[]"))
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		e.Wildcard, host = true, rest
	}
	if host == "" || strings.ContainsAny(host, "* \t") {
		return e, fmt.Errorf("network entry %q: a wildcard is only allowed as a leading *. (like *.example.com)", s)
	}
	if e.Wildcard && net.ParseIP(host) != nil {
		return e, fmt.Errorf("network entry %q: a wildcard takes a domain, not an IP address", s)
	}
	if e.Wildcard && !strings.Contains(host, ".") {
		return e, fmt.Errorf("network entry %q is too wide: a wildcard needs a domain with a dot (like *.example.com)", s)
	}
	e.Host = host
	return e, nil
}

// validateSandbox checks a server's sandbox and makes its paths absolute.
// at is the key path for error lines.
func (c *Config) validateSandbox(s *Sandbox, what string, at []string, line func(keys ...string) int) []error {
	var errs []error
	bad := func(key string, msg string) {
		errs = append(errs, &Error{Path: c.Path, Line: line(append(append([]string{}, at...), key)...), Msg: what + ": " + msg})
	}
	for _, n := range s.Network {
		if _, err := ParseNetworkEntry(n); err != nil {
			bad("network", "sandbox.network: "+err.Error())
		}
	}
	for _, list := range []struct {
		key   string
		paths []string
	}{{"read", s.Read}, {"write", s.Write}} {
		for i, p := range list.paths {
			abs, err := sandboxPath(p)
			if err != nil {
				bad(list.key, "sandbox."+list.key+": "+err.Error())
				continue
			}
			list.paths[i] = abs
		}
	}
	return errs
}

// sandboxPath makes a read or write path absolute: ~ is the user's home.
// A relative path is refused rather than guessed against some folder: it
// is what the server may touch.
func sandboxPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("an empty path")
	}
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("%q: no home folder to expand ~ in (%v)", p, err)
		}
		p = filepath.Join(home, p[1:])
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not an absolute path: write it in full (like %s) or under ~", p, examplePath())
	}
	return filepath.Clean(p), nil
}

// examplePath is an absolute path in the form this system writes them.
func examplePath() string {
	if filepath.Separator == '\\' {
		return `C:\Users\me\project`
	}
	return "/home/me/project"
}

// serverSandbox checks a server's own sandbox, or gives a stdio server
// without one a copy of sandbox_default (its paths are made absolute when
// sandbox_default is validated).
func (c *Config) serverSandbox(s *Server, line func(keys ...string) int) []error {
	if s.Sandbox == nil {
		if c.SandboxDefault != nil && s.Kind() == TransportStdio {
			d := *c.SandboxDefault
			d.Network = append([]string(nil), d.Network...)
			d.Read = append([]string(nil), d.Read...)
			d.Write = append([]string(nil), d.Write...)
			s.Sandbox = &d
		}
		return nil
	}
	at := []string{"servers", s.Name, "sandbox"}
	if s.Kind() != TransportStdio && s.Sandbox.Enabled {
		return []error{&Error{Path: c.Path, Line: line(at...), Msg: fmt.Sprintf("server '%s': 'sandbox' applies to stdio servers (command) only: the hub does not run a %s server", s.Name, s.Kind())}}
	}
	return c.validateSandbox(s.Sandbox, fmt.Sprintf("server '%s'", s.Name), at, line)
}

// Summary says in a few words how a stdio server with this sandbox is
// confined, for `mcp-hub servers` and /healthz: "off", or "on" with what
// it may reach and which paths it was given.
func (s *Sandbox) Summary() string {
	if !s.On() {
		return "off"
	}
	out := "on, no network"
	if len(s.Network) > 0 {
		out = "on, network " + strings.Join(s.Network, " ")
	}
	if len(s.Read) > 0 {
		out += ", read " + strings.Join(s.Read, " ")
	}
	if len(s.Write) > 0 {
		out += ", write " + strings.Join(s.Write, " ")
	}
	return out
}
