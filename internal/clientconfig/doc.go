// Package clientconfig knows the MCP config files of the clients people
// move to the hub from: Claude Desktop, Claude Code, Cursor, VS Code and
// Windsurf. `mcp-hub import` reads their servers into hub.yaml; `mcp-hub
// install` registers the hub in them; `uninstall` takes it out again.
//
// # Where the files are
//
// Locations gives a client's files for an Env (OS, home, %APPDATA%,
// $XDG_CONFIG_HOME, project directory) passed in, not read from the
// process, so the macOS and Windows paths are computed and tested on any
// machine. A client may have a user file and a project file (Claude Code
// also a per-project section of the user file); they are listed in the
// order the client applies them, the later winning for a name.
//
// # What an entry means
//
// Every client writes `{"<name>": {command, args, env, cwd}}` for a local
// server and `{url, type: http|sse, headers}` (Windsurf: serverUrl) for a
// remote one, under `mcpServers` (VS Code: `servers`, or `mcp.servers` in
// its settings.json). parseEntry turns one into a Server: a
// config.Upstream plus the key order, notes on what the hub does
// differently, and, for an entry the hub cannot serve (a disabled one, a
// WebSocket transport, no command or url), the reason it is skipped.
// VS Code's ${env:X}, ${input:X}, ${workspaceFolder} and ${userHome}
// become what the hub understands.
//
// # Editing without reformatting
//
// Client files hold other apps' settings (Claude Code's ~/.claude.json
// holds all of its state), sometimes comments (VS Code's JSONC). They are
// never decoded and re-encoded: jsonc.go parses a file into byte ranges
// and each edit (setMember, deleteMember) splices new bytes into the
// original, indented like its neighbours, so the rest of the file is
// byte for byte what it was. hub.yaml is edited the same way (hubconfig.go):
// new servers are spliced in as text at the end of its `servers:` block,
// found with yaml.v3's node API, and the result is parsed back to check
// (config.Servers, the hub's own reading of the file).
//
// # Writing safely
//
// WriteFile replaces a file atomically (a temporary file in the same
// directory, synced, renamed over it; symlinks followed; permissions
// kept). On Windows the rename is retried while another program holds the
// file (replace_windows.go; the rule for which errors are worth a retry is
// in busy.go so it is tested everywhere). Backup keeps a timestamped copy
// next to the file before install, uninstall and import change it.
package clientconfig
