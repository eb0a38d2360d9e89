// Package tokenstore keeps the OAuth state of mcp-hub's upstream servers on
// disk, so that a login made once by `mcp-hub login` serves every later
// process (`serve`, `call`, `chat`, ...) until it is revoked or `logout`
// removes it.
//
// The model:
//
//   - A Record is everything one server needs to call its authorization
//     server again without the user: the client registration (its client
//     id and secret, how it authenticates at the token endpoint, the
//     redirect URI it was registered with) and the current token (access
//     token, refresh token, expiry, granted scopes). Keeping the
//     registration is what makes Dynamic Client Registration happen once
//     per server rather than once per login.
//   - A record is keyed by the server's name AND its URL: renaming a server
//     or pointing it at another URL starts afresh, so a token is never sent
//     to a server it was not issued for.
//   - Files live in <state dir>/tokens (state dir: $MCP_HUB_STATE_DIR, else
//     <user config dir>/mcp-hub), one JSON file per record, mode 0600 in a
//     0700 folder. The file name is the server name made safe for every
//     platform plus a hash of name and URL.
//   - Several processes share the files: a `serve` refreshing a token while
//     `mcp-hub login` writes a new one. Every read and every
//     read-modify-write (Update) holds an exclusive lock on a sibling
//     ".lock" file (flock on Unix, LockFileEx on Windows), and writes go
//     to a temporary file that is renamed over the old one, so a reader
//     never sees half a file and two refreshes never spend the same
//     refresh token.
//
// The package knows nothing about OAuth flows; package upstream runs them
// (on go-sdk's auth package) and stores what they yield here.
package tokenstore
