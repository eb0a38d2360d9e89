package hub

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// MaxNameLength is the longest tool name the hub exposes. Claude, OpenAI,
// Gemini and VS Code all reject longer names.
const MaxNameLength = 64

// prefixSeparator joins a server prefix and a tool name.
const prefixSeparator = "__"

// ExposedName is the name a client sees for an upstream tool or prompt:
// prefix + "__" + name (or the name alone for an empty prefix), with
// characters outside [A-Za-z0-9_-] replaced by "_", and names longer than
// MaxNameLength cut and ended with a short hash of the full name so that
// two long names that share a start stay distinct and stable.
//
// The hub never parses a server back out of a name: the catalog maps each
// exposed name to its server and original name.
func ExposedName(prefix, name string) string {
	full := name
	if prefix != "" {
		full = prefix + prefixSeparator + name
	}
	clean := sanitizeName(full)
	if len(clean) <= MaxNameLength {
		// Sanitizing can make two names equal ("a.b" and "a_b"): the
		// catalog reports that as a collision.
		return clean
	}
	sum := sha256.Sum256([]byte(full))
	suffix := "_" + hex.EncodeToString(sum[:])[:8]
	return clean[:MaxNameLength-len(suffix)] + suffix
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
func serverPrefix(name string, cfg *ServerConfig) string {
	if cfg != nil && cfg.Prefix != nil {
		return *cfg.Prefix
	}
	return name
}
