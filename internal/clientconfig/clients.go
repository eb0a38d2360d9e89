package clientconfig

import (
	"fmt"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
)

// Scopes of a client's config file.
const (
	ScopeUser    = "user"    // the user's own file, every project
	ScopeProject = "project" // a file in the project, shared with the team
	ScopeLocal   = "local"   // Claude Code: this project, in the user's file
)

// Clients are the client names import and install know.
var Clients = []string{"claude-desktop", "claude-code", "cursor", "vscode", "windsurf"}

// Env is what locations depend on, explicit so that every OS's paths are
// computed (and tested) anywhere.
type Env struct {
	OS         string // runtime.GOOS: "darwin", "linux", "windows"
	Home       string // the user's home directory
	AppData    string // Windows %APPDATA% (default Home\AppData\Roaming)
	ConfigHome string // Linux $XDG_CONFIG_HOME (default Home/.config)
	Project    string // the project directory: the working directory
}

// CurrentEnv is the Env of this process. A home directory it cannot
// find is left empty: reading a file by path does not need one, and
// Locations says what is missing.
func CurrentEnv() Env {
	home, _ := os.UserHomeDir()
	wd, err := os.Getwd()
	if err != nil {
		wd = "."
	}
	return Env{OS: runtime.GOOS, Home: home, AppData: os.Getenv("APPDATA"),
		ConfigHome: os.Getenv("XDG_CONFIG_HOME"), Project: wd}
}

// join joins path elements with the separator of e.OS.
func (e Env) join(elem ...string) string {
	if e.OS != "windows" {
		return path.Join(elem...)
	}
	var parts []string
	for i, el := range elem {
		el = strings.ReplaceAll(el, "/", `\`)
		if i > 0 {
			el = strings.TrimLeft(el, `\`)
		}
		if i < len(elem)-1 {
			el = strings.TrimRight(el, `\`)
		}
		if el != "" {
			parts = append(parts, el)
		}
	}
	return strings.Join(parts, `\`)
}

func (e Env) appData() string {
	if e.AppData != "" {
		return e.AppData
	}
	return e.join(e.Home, "AppData", "Roaming")
}

// appDir is where a desktop application keeps its settings on e.OS:
// ~/Library/Application Support/NAME, %APPDATA%\NAME or ~/.config/NAME.
func (e Env) appDir(name ...string) string {
	switch e.OS {
	case "darwin":
		return e.join(append([]string{e.Home, "Library", "Application Support"}, name...)...)
	case "windows":
		return e.join(append([]string{e.appData()}, name...)...)
	}
	return e.join(append([]string{e.configHome()}, name...)...)
}

func (e Env) configHome() string {
	if e.ConfigHome != "" {
		return e.ConfigHome
	}
	return e.join(e.Home, ".config")
}

// Location is one config file of a client and where its servers sit in it.
type Location struct {
	Client string
	Scope  string
	Path   string
	// Section is the path of keys to the servers object: ["mcpServers"],
	// ["servers"] (VS Code), ["mcp", "servers"] (VS Code settings.json),
	// ["projects", DIR, "mcpServers"] (Claude Code, local scope).
	Section []string
}

// Shape is how a client writes one server entry: VS Code and Claude Code
// say "type": "stdio"; the others give command and args alone.
func (l Location) typed() bool { return l.Client == "vscode" || l.Client == "claude-code" }

// Locations lists a client's config files in the order the client applies
// them: a server defined in a later one overrides one of the same name in
// an earlier one. Files that do not exist are listed too.
func Locations(client string, e Env) ([]Location, error) {
	if e.Home == "" && slices.Contains(Clients, client) {
		return nil, fmt.Errorf("%s: the home directory is unknown (set HOME, or name the file)", client)
	}
	at := func(scope, p string, section ...string) Location {
		return Location{Client: client, Scope: scope, Path: p, Section: section}
	}
	switch client {
	case "claude-desktop":
		return []Location{at(ScopeUser, e.appDir("Claude", "claude_desktop_config.json"), "mcpServers")}, nil
	case "claude-code":
		user := e.join(e.Home, ".claude.json")
		return []Location{
			at(ScopeUser, user, "mcpServers"),
			at(ScopeProject, e.join(e.Project, ".mcp.json"), "mcpServers"),
			at(ScopeLocal, user, "projects", e.Project, "mcpServers"),
		}, nil
	case "cursor":
		return []Location{
			at(ScopeUser, e.join(e.Home, ".cursor", "mcp.json"), "mcpServers"),
			at(ScopeProject, e.join(e.Project, ".cursor", "mcp.json"), "mcpServers"),
		}, nil
	case "vscode":
		user := e.appDir("Code", "User")
		return []Location{
			at(ScopeUser, e.join(user, "settings.json"), "mcp", "servers"), // before VS Code 1.102
			at(ScopeUser, e.join(user, "mcp.json"), "servers"),
			at(ScopeProject, e.join(e.Project, ".vscode", "mcp.json"), "servers"),
		}, nil
	case "windsurf":
		return []Location{at(ScopeUser, e.join(e.Home, ".codeium", "windsurf", "mcp_config.json"), "mcpServers")}, nil
	}
	return nil, fmt.Errorf("unknown client %q: use one of %s, or a file path", client, strings.Join(Clients, ", "))
}

// InstallLocation is the file install writes for a client and scope
// ("" means user): the current format, never VS Code's settings.json.
func InstallLocation(client, scope string, e Env) (Location, error) {
	locs, err := Locations(client, e)
	if err != nil {
		return Location{}, err
	}
	if scope == "" {
		scope = ScopeUser
	}
	var scopes []string
	for i := len(locs) - 1; i >= 0; i-- { // the newest format of a scope is listed last
		if locs[i].Scope == scope {
			return locs[i], nil
		}
		if !slices.Contains(scopes, locs[i].Scope) {
			scopes = append([]string{locs[i].Scope}, scopes...)
		}
	}
	return Location{}, fmt.Errorf("%s has no %s config: scopes %s", client, scope, strings.Join(scopes, ", "))
}

// FileLocation is the location of servers in a file given by path, for
// client (may be ""): the section the file already has (mcpServers,
// VS Code's servers or mcp.servers), else the client's usual one.
func FileLocation(client, p string, data []byte) Location {
	loc := Location{Client: client, Scope: ScopeUser, Path: p, Section: []string{"mcpServers"}}
	if client == "vscode" {
		loc.Section = []string{"servers"}
	}
	d, err := parseJSONC(data)
	if err != nil || d.root.kind != '{' {
		return loc
	}
	for _, s := range [][]string{{"mcpServers"}, {"servers"}, {"mcp", "servers"}} {
		if d.find(s) != nil {
			loc.Section = s
			return loc
		}
	}
	return loc
}

// cursorNameLimit is Cursor's bound on an MCP tool's server name and tool
// name together: it drops tools past it without a word.
const cursorNameLimit = 60

// ToolNameLimit is the longest tool name the client accepts from a server
// it names entry, or 0 when the client sets no limit of its own (the hub's
// default then holds).
func ToolNameLimit(client, entry string) int {
	if client == "cursor" {
		return cursorNameLimit - len(entry)
	}
	return 0
}
