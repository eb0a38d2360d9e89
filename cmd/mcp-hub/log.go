package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// newLogger logs text records to stderr (stdout belongs to the MCP
// protocol in stdio mode), with every secret replaced by "[REDACTED]".
func newLogger(c *cli.Context, secrets []string) (*slog.Logger, error) {
	var level slog.Level
	name := globalString(c, "log-level")
	if err := level.UnmarshalText([]byte(name)); err != nil {
		return nil, cli.Exit(fmt.Sprintf("--log-level %q: use debug, info, warn or error", name), exitConfig)
	}
	h := slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: level})
	if len(secrets) == 0 {
		return slog.New(h), nil
	}
	return slog.New(redacting(h, secrets)), nil
}

// redacting wraps h so that no secret reaches the log.
func redacting(h slog.Handler, secrets []string) slog.Handler {
	return redactHandler{Handler: h, r: upstream.NewRedactor(secrets)}
}

// redactHandler rewrites the message and every string-ish attribute with
// the hub's redactor (longest secret first, like everywhere else).
type redactHandler struct {
	slog.Handler
	r *upstream.Redactor
}

func (h redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.String(rec.Message), rec.PC)
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
		return slog.String(a.Key, h.r.String(v.String()))
	case slog.KindAny:
		return slog.String(a.Key, h.r.String(fmt.Sprint(v.Any())))
	}
	return a
}

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
