package config

import (
	"strings"
	"testing"
)

// TestSubscriptionLimits: protocol.max_listen_uris and
// max_subscriptions_per_principal have their defaults when left out, take
// a positive value, and a negative one is an error naming the file, line
// and key.
func TestSubscriptionLimits(t *testing.T) {
	const servers = "servers:\n  a:\n    command: x\n"
	for _, tc := range []struct {
		doc                string
		listen, principal  int
		wantErr, wantWhere string
	}{
		{"", DefaultMaxListenURIs, DefaultMaxSubscriptionsPerPrincipal, "", ""},
		{"protocol:\n  max_listen_uris: 7\nmax_subscriptions_per_principal: 9\n", 7, 9, "", ""},
		{"protocol:\n  max_listen_uris: -1\n", 0, 0, "protocol.max_listen_uris must be positive", "hub.yaml:5"},
		{"max_subscriptions_per_principal: -3\n", 0, 0, "max_subscriptions_per_principal must be positive", "hub.yaml:4"},
	} {
		cfg, err := Parse("hub.yaml", []byte(servers+tc.doc), nil)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), tc.wantWhere) {
				t.Errorf("%q: %v, want an error at %s: %s", tc.doc, err, tc.wantWhere, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.doc, err)
		}
		if got := cfg.Protocol.ListenURILimit(); got != tc.listen {
			t.Errorf("%q: ListenURILimit %d, want %d", tc.doc, got, tc.listen)
		}
		if got := cfg.SubscriptionLimit(); got != tc.principal {
			t.Errorf("%q: SubscriptionLimit %d, want %d", tc.doc, got, tc.principal)
		}
	}
}
