// Package config is the whole hub.yaml schema and its one parser: every
// other package that reads the file (upstream, hub, gateway, the chat,
// internal/clientconfig, the program) takes its types from here, and
// nothing else parses it.
//
// A file is read whole (at most MaxFileBytes) and parsed in three passes
// over yaml.v3's node tree:
//
//   - unknown keys are found on the raw text, so their lines are right,
//     with the closest known key as a suggestion;
//   - ${VAR} and ${VAR:-default} are expanded one scalar at a time, so a
//     value can never change the document's shape; in a credential key
//     (auth, session_store, hash_key, audit.file, a server's headers and
//     oauth) a variable that expands empty is an error, not an empty
//     credential; every expanded value is a secret to redact;
//   - the expanded tree is decoded into Config and validated.
//
// Every problem is an *Error with the file, the line and the key, and its
// message never quotes a secret. A Claude Desktop, Cursor or VS Code JSON
// file (`mcpServers`, or `servers`) is translated into the same tree first,
// so one code path expands and validates both.
//
// The schema's parts: Config (the file), Server (an entry under
// `servers:`: Upstream, how to reach it, plus how the hub exposes its
// tools), Discovery, Toolset, Restart, and the gateway's sections (Auth,
// Audit, Telemetry, HTTPLimits, session_store, hash_key; gateway.go), and
// the chat's sections (Provider, Model, Chat, Template; chat.go), which
// package chatloop runs on. Those are checked key by key on the expanded
// tree, as their errors have always read ("providers.NAME: unknown key
// ..."), and reported with the rest of the file's.
//
// Servers reads a file's servers as written, without expansion or
// validation, for `mcp-hub import`, which adds to the file.
package config
