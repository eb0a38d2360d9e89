package main

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// TestLogValuesBounded: the CLI's log handler bounds the message and every
// value of a record (maxLogValue), replaces control characters, and
// redacts before it cuts, so that no part of a secret survives a cut.
func TestLogValuesBounded(t *testing.T) {
	t.Parallel()
	const secret = "s3cret-log-value-9876"
	var out strings.Builder
	log := slog.New(redactHandler{Handler: slog.NewTextHandler(&out, nil), r: redact.New([]string{secret})})
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

// TestOneLine: a table cell of what an upstream wrote (a description, a
// last error) is one line of at most max bytes, valid UTF-8, without
// control characters.
func TestOneLine(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"Creates an issue.",
		"red \x1b[31malert\x1b[0m\r\nfake line \u202egnp.exe",
		strings.Repeat("ü", 100),
	} {
		got := oneLine(in, 70)
		if len(got) > 70 || !utf8.ValidString(got) || strings.ContainsAny(got, "\x1b\r\n\u202e") {
			t.Errorf("oneLine(%q) = %q", in, got)
		}
	}
	if got := oneLine("Creates  an\nissue.", 70); got != "Creates an issue." {
		t.Errorf("oneLine kept the layout: %q", got)
	}
}
