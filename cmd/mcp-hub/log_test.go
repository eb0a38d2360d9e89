package main

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/upstream"
)

// TestLogValuesBounded: the CLI's log handler bounds the message and every
// value of a record (maxLogValue), replaces control characters, and
// redacts before it cuts, so that no part of a secret survives a cut.
func TestLogValuesBounded(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-log-value-9876"
	var out strings.Builder
	log := slog.New(redactHandler{Handler: slog.NewTextHandler(&out, nil), r: upstream.NewRedactor([]string{secret})})
	huge := strings.Repeat("a", maxLogValue-10) + secret + strings.Repeat("b", 4<<20)
	log.Info("msg "+huge, "name", huge, "err", errors.New("bad \x1b[31m"+huge), "fake", "x\ntime=now level=ERROR msg=forged\u202e")
	line := out.String()
	if n := len(line); n > 4*(maxLogValue+100) {
		t.Errorf("log line of %d bytes, want at most about 4 values of %d", n, maxLogValue)
	}
	for _, bad := range []string{secret[:6], "\x1b", "\u202e", "\ntime=now"} {
		if strings.Contains(line, bad) {
			t.Errorf("log line holds %q", bad)
		}
	}
	if strings.Count(line, "\n") != 1 {
		t.Errorf("one record became %d lines", strings.Count(line, "\n"))
	}
}
