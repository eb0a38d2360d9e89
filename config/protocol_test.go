package config

import (
	"strings"
	"testing"
)

// TestWaitingLimits: protocol.max_waiting_calls and its per-principal
// share take their defaults when left out, the share is at most the
// total, and a negative value is refused naming the key and its line,
// never the value.
func TestWaitingLimits(t *testing.T) {
	const servers = "servers:\n  a:\n    command: x\n"
	for _, tc := range []struct {
		doc          string
		total, share int
		err          string
	}{
		{"", DefaultMaxWaitingCalls, DefaultMaxWaitingCallsPerPrincipal, ""},
		{"protocol:\n  max_waiting_calls: 50\n  max_waiting_calls_per_principal: 5\n", 50, 5, ""},
		{"protocol:\n  max_waiting_calls: 10\n", 10, 10, ""},
		{"protocol:\n  max_waiting_calls_per_principal: -7\n", 0, 0,
			"hub.yaml:5: protocol.max_waiting_calls_per_principal must be positive (or left out for its default)"},
		{"protocol:\n  max_waiting_calls: -3\n", 0, 0,
			"hub.yaml:5: protocol.max_waiting_calls must be positive (or left out for its default)"},
		{"protocol:\n  max_waiting: 3\n", 0, 0, "hub.yaml:5: unknown key 'max_waiting'"},
	} {
		cfg, err := parseConfig("hub.yaml", []byte(servers+tc.doc))
		if tc.err != "" {
			if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %s", tc.doc, err, tc.err)
			}
			if err != nil && (strings.Contains(err.Error(), "-7") || strings.Contains(err.Error(), "-3")) {
				t.Errorf("%q: the error repeats the value: %v", tc.doc, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		if total, share := cfg.Protocol.WaitingLimits(); total != tc.total || share != tc.share {
			t.Errorf("%q: limits %d, %d; want %d, %d", tc.doc, total, share, tc.total, tc.share)
		}
	}
}
