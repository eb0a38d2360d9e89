// Package pin pins the tool definitions mcp-hub serves, so that a server
// cannot change what a tool says (a "rug pull": a description that turns
// into instructions to read ~/.ssh/id_rsa and pass it on) without a person
// seeing and approving the change.
//
// The model:
//
//   - A definition is what a model reads of a tool: its name, title,
//     description, input and output schemas and annotations. Canonical
//     writes them as canonical JSON (fixed field order, object keys
//     sorted, no insignificant space), so that the same definition sent
//     in another key order or spacing is the same text; Digest is its
//     SHA-256. A server's instructions are pinned the same way, as text.
//   - The first time a hub sees a tool it records the digest and the
//     canonical text (the text is kept so that `mcp-hub pins diff` can
//     show old and new). From then on each definition is in one of three
//     states: pinned (it matches its pin and is served), quarantined (it
//     differs from its pin, or carries hidden characters) or new (first
//     seen under first_use: quarantine). Quarantined and new tools are
//     held back: the hub lists, searches and calls none of them, and a
//     call by any route gets an error with the command that approves it.
//     A definition that changes back to its pin is served again.
//   - Hidden characters are the ones a person reviewing a tool does not
//     see and a model reads: Unicode tag characters (U+E0000–U+E007F),
//     bidirectional controls and marks, zero-width characters (Hidden).
//     A definition with any is quarantined even on first sight, and
//     whatever shows it to a person writes them as escapes (Escape,
//     EscapeJSON): \u{E0041}, \u202E.
//   - Pins are kept per server name and identity: how the config's entry
//     launches the server (a hash of the command and arguments, the URL or
//     the builtin's name), as the token store keys a token by name and
//     URL. Another command or URL under the same name is another server,
//     pinned afresh.
//   - first_use (config `pinning: {first_use: ...}`): trust (the default)
//     pins what it sees first; quarantine holds new tools, and every tool
//     of a new server, until approved.
//   - A server's instructions that change (or carry hidden characters)
//     wait for approval like a tool, but hold back no tool: the hub passes
//     no upstream's instructions on to its clients, so the pin only makes
//     the change visible in `mcp-hub pins`.
//
// Where: a Backend keeps the pins' bytes. By default one JSON file,
// <state folder>/pins.json (state folder:
// $MCP_HUB_STATE_DIR, else <user config dir>/mcp-hub), mode 0600, read
// without following a link planted at its path. Every change is a
// read-modify-write under an exclusive lock on pins.lock next to it, and
// the file is replaced atomically (temporary file, fsync, rename), so two
// hubs and the CLI may share it. A file that cannot be read (damaged, too
// big, a link), or a folder where the lock cannot be taken, fails closed:
// the hub holds every tool back. A write that fails under the lock (a full
// disk) keeps the pins in memory for that process, logged.
//
// Replicas with a session store keep them there instead (package
// gateway's PinSharer, Redis in gateway/redisstore: the JSON and a version
// counter, changed in one optimistic transaction), and agree.
//
// How approvals propagate: `mcp-hub pins approve` writes the pins; each
// running hub looks at their version every second (Store.Changed: one
// stat of the file, or one GET) and, when it changed, rebuilds its
// catalog, which re-reads the pins: the approved tool is served, and
// sessions get tools/list_changed.
//
// Limits: the file is read up to MaxFileBytes; the text kept per
// definition is cut at MaxTextBytes (the digest covers all of it); a lock
// is waited for at most LockWait.
package pin
