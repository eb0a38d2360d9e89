package hub

// Tests of naming.go: the exposed-name rule.

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

func TestSpecExposedNameRule(t *testing.T) {
	long := strings.Repeat("a", 70)
	for _, tc := range []struct {
		prefix, name, want string
	}{
		{"weather", "get_forecast", "weather__get_forecast"},
		{"", "get_forecast", "get_forecast"},
		{"gh", "create-issue", "gh__create-issue"},
		{"my server", "do.thing/x", "my_server__do_thing_x"},
		{"s", "café", "s__caf_"},
		{"", strings.Repeat("x", 64), strings.Repeat("x", 64)},
		{"srv", strings.Repeat("b", 59), "srv__" + strings.Repeat("b", 59)},
	} {
		if got := ExposedName(tc.prefix, tc.name); got != tc.want {
			t.Errorf("ExposedName(%q, %q) = %q, want %q", tc.prefix, tc.name, got, tc.want)
		}
	}
	// Longer than 64: cut, ending in a short stable hash of the full name.
	hashed := regexp.MustCompile(`^[A-Za-z0-9_-]+_[0-9a-f]{8}$`)
	a := ExposedName("srv", long)
	b := ExposedName("srv", long+"b")
	c := ExposedName("srv", long+".c")
	for _, n := range []string{a, b, c} {
		if len(n) != config.MaxNameLength || !hashed.MatchString(n) || !strings.HasPrefix(n, "srv__aaaa") {
			t.Errorf("%q: want %d characters of [A-Za-z0-9_-] ending in _<8 hex>", n, config.MaxNameLength)
		}
	}
	if a == b || b == c || a == c {
		t.Errorf("long names that share a start collide: %q %q %q", a, b, c)
	}
	if ExposedName("srv", long) != a {
		t.Error("not stable")
	}
	if got := ExposedName("", strings.Repeat("x", 65)); len(got) != 64 {
		t.Errorf("65 chars -> %q", got)
	}
}
