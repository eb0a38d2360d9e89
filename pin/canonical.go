package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// definition is the part of a tool that is pinned, in a fixed field order.
type definition struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
}

// Canonical is a tool's pinned definition as canonical JSON: name, title,
// description, inputSchema, outputSchema and annotations, with the keys of
// every object sorted, no insignificant space, and no escaping beyond
// JSON's own (so hidden characters stay what they are and are found).
// Two definitions that mean the same JSON have the same bytes, whatever
// order or spacing the server sent.
func Canonical(t *mcp.Tool) ([]byte, error) {
	d := definition{Name: t.Name, Title: t.Title, Description: t.Description}
	var err error
	if d.InputSchema, err = canonicalValue(t.InputSchema); err != nil {
		return nil, fmt.Errorf("tool '%s': input schema: %w", Escape(t.Name), err)
	}
	if d.OutputSchema, err = canonicalValue(t.OutputSchema); err != nil {
		return nil, fmt.Errorf("tool '%s': output schema: %w", Escape(t.Name), err)
	}
	if t.Annotations != nil {
		if d.Annotations, err = canonicalValue(t.Annotations); err != nil {
			return nil, fmt.Errorf("tool '%s': annotations: %w", Escape(t.Name), err)
		}
	}
	return marshal(d)
}

// canonicalValue is v as canonical JSON, nil for nil or JSON null.
func canonicalValue(v any) (json.RawMessage, error) {
	if v == nil {
		return nil, nil
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers keep their exact text
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, err
	}
	if tree == nil {
		return nil, nil
	}
	return marshal(tree) // encoding/json sorts map keys
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Digest is the pin of a canonical text: "sha256:" and its hex SHA-256.
func Digest(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Hidden reports whether r is a character a person reading the text does
// not see but a model reads: Unicode tag characters (U+E0000–U+E007F),
// bidirectional controls (U+202A–U+202E, U+2066–U+2069, and the marks
// U+200E, U+200F, U+061C) and zero-width characters (U+200B–U+200D,
// U+2060, U+FEFF).
func Hidden(r rune) bool {
	switch {
	case r >= 0xE0000 && r <= 0xE007F,
		r >= 0x202A && r <= 0x202E,
		r >= 0x2066 && r <= 0x2069,
		r >= 0x200B && r <= 0x200F,
		r == 0x2060, r == 0xFEFF, r == 0x061C:
		return true
	}
	return false
}

// HasHidden reports whether s carries a Hidden character.
func HasHidden(s string) bool { return strings.IndexFunc(s, Hidden) >= 0 }

// Escape is s with every Hidden character, and every other control or
// format character a terminal would act on, written as an escape:
// \u{E0041} for a tag character, \u202E for one in the Basic Multilingual
// Plane. The text around them is unchanged, so a reviewer sees both what
// a person sees and what the model reads.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n' || r == '\t':
			b.WriteRune(r)
		case r == '\\':
			b.WriteRune(r)
		case Hidden(r) || r < 0x20 || (r >= 0x7F && r < 0xA0) || r == 0x2028 || r == 0x2029 || r == 0xFFFD:
			if r > 0xFFFF {
				fmt.Fprintf(&b, `\u{%X}`, r)
			} else {
				fmt.Fprintf(&b, `\u%04X`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// EscapeJSON is JSON text b with every Hidden character written as a JSON
// escape (\u202e; a surrogate pair for a tag character). Hidden characters
// can only be inside strings, where an escape means the same: the JSON is
// unchanged, and a terminal shows what is there.
func EscapeJSON(b []byte) []byte {
	if !HasHidden(string(b)) {
		return b
	}
	var out bytes.Buffer
	for _, r := range string(b) {
		switch {
		case !Hidden(r):
			out.WriteRune(r)
		case r > 0xFFFF:
			r -= 0x10000
			fmt.Fprintf(&out, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		default:
			fmt.Fprintf(&out, `\u%04x`, r)
		}
	}
	return out.Bytes()
}

// Pretty is a pinned text for a person: canonical JSON indented, other
// text (a server's instructions) as it is; hidden characters escaped.
func Pretty(text string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(text), "", "  ") == nil {
		text = buf.String()
	}
	return Escape(text)
}
