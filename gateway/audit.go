package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/rotate"
)

const (
	defaultAuditMB      = 100
	defaultAuditBackups = 5
	// maxAuditedArguments bounds the arguments of one audit line as they
	// are written there (redacted, cleaned, JSON-escaped), with
	// include_arguments: larger ones are left out, and the line keeps
	// their size (arguments_note) and args_hmac. A line without arguments
	// is about 300-400 bytes; this keeps one with arguments within a few
	// times that, so rotation by max_size_mb keeps a comparable number of
	// calls (docs/security.md, "Audit log size").
	maxAuditedArguments = 2 << 10
	// maxAuditField bounds every other text field of an audit line (a
	// tool name, a principal, a client's name), so that no client can
	// fill the file, and rotate earlier records out, with one long name.
	maxAuditField = 256
)

// Audit methods other than MCP method names.
const (
	auditSessionStart = "session/start"
	auditSessionEnd   = "session/end"
)

// auditEntry is one line of the audit log.
type auditEntry struct {
	Time       string `json:"time"`
	Method     string `json:"method"` // tools/call, search_tools, session/start, session/end, pins/quarantined, pins/released
	Session    int64  `json:"session"`
	MCPSession string `json:"mcp_session,omitempty"` // the HTTP Mcp-Session-Id
	Principal  string `json:"principal"`
	Kind       string `json:"principal_kind"`
	Toolset    string `json:"toolset,omitempty"`
	Client     string `json:"client,omitempty"` // clientInfo name/version, at session start
	Tool       string `json:"tool,omitempty"`   // the exposed name called
	Server     string `json:"server,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	// DurationMS is the call's or search's time, or the session's life.
	DurationMS float64 `json:"duration_ms"`
	Loaded     int     `json:"loaded,omitempty"` // tools a search loaded
	// ArgsDigest identifies the arguments without revealing them: their
	// HMAC-SHA256 under the hash key, since small arguments are guessable.
	ArgsDigest string          `json:"args_hmac,omitempty"`
	Arguments  json.RawMessage `json:"arguments,omitempty"`
	ArgsNote   string          `json:"arguments_note,omitempty"`
	// Reason says why a tool is held back by its pin (pins/quarantined).
	Reason string `json:"reason,omitempty"`
}

// auditLog writes entries, each in one write (see package rotate).
type auditLog struct {
	file        *rotate.File
	hash        *keyedHash
	includeArgs bool
	redact      *redact.Redactor
	log         *slog.Logger
}

// openAudit opens the configured file; nil when there is none. A file that
// cannot be opened is a config error: an operator who asked for an audit
// trail must not get a hub that silently keeps none.
func openAudit(cfg *config.Config, hash *keyedHash, redact *redact.Redactor, log *slog.Logger) (*auditLog, error) {
	a := cfg.Audit
	if a.File == "" {
		return nil, nil
	}
	mb, backups := a.MaxSizeMB, a.MaxBackups
	if mb <= 0 {
		mb = defaultAuditMB
	}
	if backups <= 0 {
		backups = defaultAuditBackups
	}
	f, err := rotate.Open(a.File, int64(mb)<<20, backups)
	if err != nil {
		return nil, &config.Error{Path: cfg.Path, Msg: fmt.Sprintf("audit.file: cannot open %s: %v (fix the path or its permissions)", a.File, err)}
	}
	return &auditLog{file: f, hash: hash, includeArgs: a.IncludeArguments, redact: redact, log: log}, nil
}

func (a *auditLog) close() error {
	if a == nil {
		return nil
	}
	if err := a.file.Close(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

// write appends e as one line. A failed write is logged, never fatal to
// the request it describes.
func (a *auditLog) write(e *auditEntry) {
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	for _, f := range [...]*string{&e.Method, &e.MCPSession, &e.Principal, &e.Kind, &e.Toolset, &e.Client, &e.Tool, &e.Server, &e.Outcome, &e.ArgsNote, &e.Reason} {
		*f = clean.Line(*f, maxAuditField)
	}
	line, err := json.Marshal(e)
	if err != nil {
		a.log.Error("audit: cannot encode an entry", "err", err)
		return
	}
	if _, err := a.file.Write(append(line, '\n')); err != nil {
		a.log.Error("audit: write failed", "err", err)
	}
}

// arguments fills in what the entry says about a call's arguments: always
// their hash, and with include_arguments their value, redacted.
func (a *auditLog) arguments(e *auditEntry, raw json.RawMessage) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	e.ArgsDigest = a.hash.hex(raw)
	if !a.includeArgs {
		return
	}
	if len(raw) > maxAuditedArguments {
		e.ArgsNote = fmt.Sprintf("omitted: %d bytes, over the %d KiB audit limit for arguments", len(raw), maxAuditedArguments>>10)
		return
	}
	// Secrets are matched in the decoded strings (whatever escapes the
	// client wrote: \u0026, \u0041, \/), then in the text, for one that
	// spans JSON syntax.
	red := []byte(a.redact.String(string(a.redact.JSON(raw))))
	var compact bytes.Buffer
	if json.Compact(&compact, red) != nil {
		// Redaction broke the JSON (a secret spanning syntax): keep it as a string.
		red, _ = json.Marshal(string(red))
	} else {
		red = compact.Bytes()
	}
	// No bidi control or C1 character raw in the file. The bound is on
	// the text as the line will hold it: redaction, cleaning and the
	// encoder's escapes (<, >, & become \u003c...) may have grown it.
	red = clean.JSON(red)
	written, err := json.Marshal(json.RawMessage(red))
	if err != nil {
		e.ArgsNote = "omitted: not JSON once redacted"
		return
	}
	if len(written) > maxAuditedArguments {
		e.ArgsNote = fmt.Sprintf("omitted: %d bytes once redacted and escaped, over the %d KiB audit limit for arguments", len(written), maxAuditedArguments>>10)
		return
	}
	e.Arguments = red
}
