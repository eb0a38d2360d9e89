package clientconfig

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// Server is one entry of a client's servers object, in the hub's terms.
type Server struct {
	Name string
	// From is the file the entry came from.
	From string
	// Config is the entry as a hub server: command, args, env, cwd, or
	// url, transport, headers.
	Config config.Upstream
	// EnvOrder and HeaderOrder keep the file's key order for writing.
	EnvOrder, HeaderOrder []string
	// Skip says why the entry cannot be imported; "" means it can.
	Skip string
	// Notes are things the hub does differently and the user should check.
	Notes []string
}

// Transport summarises how the hub will reach the server, for messages
// that must not print arguments (they may hold secrets).
func (s Server) Transport() string {
	if s.Config.URL != "" {
		return s.Config.Kind() + " " + redactURL(s.Config.URL)
	}
	n := len(s.Config.Args)
	switch n {
	case 0:
		return "stdio: " + s.Config.Command
	case 1:
		return "stdio: " + s.Config.Command + " (1 argument)"
	}
	return fmt.Sprintf("stdio: %s (%d arguments)", s.Config.Command, n)
}

// entry is a client's server entry: every client's keys, leniently typed.
type entry struct {
	Type      string            `json:"type"`
	Transport string            `json:"transport"`
	Command   string            `json:"command"`
	Args      []json.RawMessage `json:"args"`
	Env       json.RawMessage   `json:"env"`
	Cwd       string            `json:"cwd"`
	URL       string            `json:"url"`
	ServerURL string            `json:"serverUrl"` // Windsurf
	Headers   json.RawMessage   `json:"headers"`
	Disabled  bool              `json:"disabled"`
	EnvFile   string            `json:"envFile"` // VS Code
}

// parseEntry turns one raw entry into a Server; an entry the hub cannot
// serve comes back with Skip set. e resolves VS Code / Cursor variables
// (${workspaceFolder}, ${userHome}).
func parseEntry(name, from string, raw json.RawMessage, e Env) Server {
	s := Server{Name: name, From: from}
	var en entry
	if err := json.Unmarshal(raw, &en); err != nil {
		s.Skip = fmt.Sprintf("the entry is not understood: %v", err)
		return s
	}
	if en.Disabled {
		s.Skip = "disabled in the client"
		return s
	}
	vars := variables{env: e}
	c := &s.Config
	c.Command = vars.expand(en.Command)
	for _, a := range en.Args {
		var v any
		if json.Unmarshal(a, &v) != nil {
			continue
		}
		c.Args = append(c.Args, vars.expand(scalar(v)))
	}
	var err error
	if c.Env, s.EnvOrder, err = stringMap(en.Env, &vars); err != nil {
		s.Skip = fmt.Sprintf("env: %v", err)
		return s
	}
	if c.Headers, s.HeaderOrder, err = stringMap(en.Headers, &vars); err != nil {
		s.Skip = fmt.Sprintf("headers: %v", err)
		return s
	}
	c.Cwd = vars.expand(en.Cwd)
	c.URL = vars.expand(en.URL)
	if c.URL == "" {
		c.URL = vars.expand(en.ServerURL)
	}
	kind := strings.ToLower(en.Type)
	if kind == "" {
		kind = strings.ToLower(en.Transport)
	}
	switch kind {
	case "", "stdio":
		if c.URL != "" {
			c.Transport = ""
			if strings.HasSuffix(strings.TrimRight(urlPath(c.URL), "/"), "/sse") {
				c.Transport = config.TransportSSE
				s.Notes = append(s.Notes, "no transport given; the URL ends in /sse, so SSE")
			}
		}
	case "http", "streamable-http", "streamablehttp", "streamable_http":
		c.Transport = "" // streamable HTTP is the hub's default
	case "sse":
		c.Transport = config.TransportSSE
	default:
		s.Skip = fmt.Sprintf("transport %q cannot be served by mcp-hub (stdio, streamable HTTP and SSE only)", en.Type+en.Transport)
		return s
	}
	switch {
	case c.Command == "" && c.URL == "":
		s.Skip = "no command or url"
		return s
	case c.Command != "" && c.URL != "":
		s.Skip = "both command and url"
		return s
	case c.URL != "" && !strings.Contains(c.URL, "${"): // a ${VAR} URL is checked once expanded
		if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			s.Skip = fmt.Sprintf("url %s is not an http(s) URL", redactURL(c.URL))
			return s
		}
	}
	if en.Type == "stdio" && c.URL != "" {
		s.Skip = "type stdio with a url"
		return s
	}
	if en.EnvFile != "" {
		s.Notes = append(s.Notes, "envFile is not read by mcp-hub: copy its variables into env")
	}
	s.Notes = append(s.Notes, vars.notes...)
	return s
}

// IsHub reports whether the entry runs mcp-hub itself (an earlier
// install): importing it would make the hub its own upstream.
func (s Server) IsHub(self string) bool {
	if s.Config.Command == "" {
		return false
	}
	if self != "" && s.Config.Command == self {
		return true
	}
	base := strings.ToLower(path.Base(strings.ReplaceAll(s.Config.Command, `\`, "/")))
	return strings.TrimSuffix(base, ".exe") == "mcp-hub"
}

func scalar(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	case float64:
		b, _ := json.Marshal(v)
		return string(b)
	}
	return fmt.Sprint(v)
}

// stringMap reads an env or headers object; values that are numbers or
// booleans become strings, as the clients pass them.
func stringMap(raw json.RawMessage, vars *variables) (map[string]string, []string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil, nil
	}
	d, err := parseJSONC(raw)
	if err != nil {
		return nil, nil, err
	}
	if d.root.kind != '{' {
		return nil, nil, fmt.Errorf("not an object")
	}
	out := map[string]string{}
	var order []string
	for _, m := range d.root.members {
		var v any
		if err := json.Unmarshal(d.std[m.value.start:m.value.end], &v); err != nil {
			return nil, nil, err
		}
		if _, dup := out[m.key]; !dup {
			order = append(order, m.key)
		}
		out[m.key] = vars.expand(scalar(v))
	}
	return out, order, nil
}

// variables turns the clients' ${...} forms into the hub's: ${env:NAME}
// (VS Code, Cursor) is ${NAME}; ${userHome} and ${workspaceFolder} are
// the directories; a VS Code ${input:id} (a prompt VS Code shows) becomes
// ${ID}, to be set in the environment, with a note.
type variables struct {
	env   Env
	notes []string
}

var clientVar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{(env|input):([^}]+)\}|\$\{(userHome|workspaceFolder|workspaceFolderBasename|pathSeparator|/)\}`)
})

func (v *variables) expand(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	return clientVar().ReplaceAllStringFunc(s, func(ref string) string {
		m := clientVar().FindStringSubmatch(ref)
		switch {
		case m[1] == "env":
			return "${" + m[2] + "}"
		case m[1] == "input":
			name := envName(m[2])
			note := fmt.Sprintf("${input:%s} is a prompt VS Code shows: mcp-hub reads ${%s} from its environment instead", m[2], name)
			if !slices.Contains(v.notes, note) {
				v.notes = append(v.notes, note)
			}
			return "${" + name + "}"
		case m[3] == "userHome":
			return v.env.Home
		case m[3] == "workspaceFolder":
			return v.env.Project
		case m[3] == "workspaceFolderBasename":
			return path.Base(strings.ReplaceAll(v.env.Project, `\`, "/"))
		case m[3] == "pathSeparator" || m[3] == "/":
			if v.env.OS == "windows" {
				return `\`
			}
			return "/"
		}
		return ref
	})
}

// envName makes an environment variable name: "api-key" -> "API_KEY".
func envName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(s) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := strings.Trim(b.String(), "_")
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		name = "V_" + name
	}
	return name
}

func urlPath(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Path
}

// redactURL drops a URL's password and query values: it is printed.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		if strings.Contains(raw, "${") && !strings.ContainsAny(raw, "?@") {
			return raw // a ${VAR} reference, expanded by the hub
		}
		return "[a URL that does not parse]"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "REDACTED")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			q.Set(k, "REDACTED")
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Secrets are the literal values of s that must not be printed: what the
// hub itself redacts (header values, env values, URL credentials and
// query values) and arguments that carry a credential: the value of a
// flag named like one (--api-key X, --token=X), a URL password, or a
// string shaped like a known token.
func (s Server) Secrets() []string {
	var out []string
	for _, v := range s.Config.SecretValues() {
		if !envRef().MatchString(v) { // ${VAR} names a secret, it is none
			out = append(out, v)
		}
	}
	add := func(v string) {
		if len(v) >= 4 && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	args := s.Config.Args
	for i, a := range args {
		if name, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") && redact.SecretName(name) {
			add(val)
			continue
		}
		if strings.HasPrefix(a, "-") && redact.SecretName(a) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			add(args[i+1])
			continue
		}
		if u, err := url.Parse(a); err == nil && u.User != nil {
			if p, ok := u.User.Password(); ok {
				add(p)
			}
		}
		if redact.HasKeyPrefix(a) {
			add(a)
		}
	}
	return out
}

var envRef = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}$`) })
