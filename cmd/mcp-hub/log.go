package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// maxLogValue bounds the message and each value of a log line: a client
// or an upstream that gets a long text logged (an error, a name, a line
// of its stderr) cannot grow the log by more than this a record.
const maxLogValue = 8 << 10

// newLogger logs text records to stderr (stdout belongs to the MCP
// protocol in stdio mode), with every secret replaced by "[REDACTED]".
func newLogger(c *cli.Context, secrets []string) (*slog.Logger, error) {
	return newRedactingLogger(c, redact.New(secrets))
}

// newRedactingLogger is newLogger with a redactor that may learn more
// secrets while the process runs (OAuth tokens).
func newRedactingLogger(c *cli.Context, r *redact.Redactor) (*slog.Logger, error) {
	var level slog.Level
	name := globalString(c, "log-level")
	if err := level.UnmarshalText([]byte(name)); err != nil {
		return nil, cli.Exit(fmt.Sprintf("--log-level %q: use debug, info, warn or error", name), exitConfig)
	}
	h := slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level})
	return slog.New(redactHandler{Handler: h, r: r}), nil
}

// addLogSecrets makes log redact more secrets too: those of a config
// reloaded while serving.
func addLogSecrets(log *slog.Logger, secrets []string) {
	if h, ok := log.Handler().(redactHandler); ok {
		h.r.Add(secrets...)
	}
}

// redactHandler rewrites the message and every string-ish attribute with
// the hub's redactor (longest secret first, like everywhere else), then
// bounds it and strips its control characters (clean.Text): redacted
// first, so that a cut cannot leave half a secret unrecognised.
type redactHandler struct {
	slog.Handler
	r *redact.Redactor
}

func (h redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.clean(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.redact(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h redactHandler) redact(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindGroup:
		attrs := v.Group()
		out := make([]any, len(attrs))
		for i, g := range attrs {
			out[i] = h.redact(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindString:
		return slog.String(a.Key, h.clean(v.String()))
	case slog.KindAny:
		return slog.String(a.Key, h.clean(fmt.Sprint(v.Any())))
	}
	return a
}

func (h redactHandler) clean(s string) string { return clean.Text(h.r.String(s), maxLogValue) }

func (h redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.redact(a)
	}
	return redactHandler{Handler: h.Handler.WithAttrs(red), r: h.r}
}

func (h redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{Handler: h.Handler.WithGroup(name), r: h.r}
}
