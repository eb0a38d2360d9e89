package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
)

// prefixSeparator joins a server prefix and a tool name.
const prefixSeparator = "__"

// ExposedName is the name a client sees for an upstream tool or prompt
// under the default limit (MaxNameLength); see exposedName.
func ExposedName(prefix, name string) string {
	return exposedName(prefix, name, config.MaxNameLength)
}

// exposedName is prefix + "__" + name (or the name alone for an empty
// prefix), with characters outside [A-Za-z0-9_-] replaced by "_", and names
// longer than limit cut and ended with a short hash of the full name so
// that two long names that share a start stay distinct, and the same name
// is cut the same way on every start and every replica.
//
// The hub never parses a server back out of a name: the catalog maps each
// exposed name to its server and original name.
func exposedName(prefix, name string, limit int) string {
	full := name
	if prefix != "" {
		full = prefix + prefixSeparator + name
	}
	clean := sanitizeName(full)
	if len(clean) <= limit {
		// Sanitizing can make two names equal ("a.b" and "a_b"): the
		// catalog reports that as a collision.
		return clean
	}
	sum := sha256.Sum256([]byte(full))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	return clean[:limit-len(suffix)] + suffix
}

func sanitizeName(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// serverPrefix is the prefix a server's names get.
func serverPrefix(name string, cfg *config.Server) string {
	if cfg != nil && cfg.Prefix != nil {
		return *cfg.Prefix
	}
	return name
}
