package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// A JSON or JSONC (comments, trailing commas: VS Code) file is edited in
// place: the file is parsed into a tree of byte ranges, and an edit splices
// new bytes into the original, so every other byte (key order, other apps'
// keys, comments, indentation) stays as it was. Each edit parses the file
// anew: files are small, and one edit at a time is easy to get right.

// node is one JSON value: its byte range in the file, and for objects its
// members in file order.
type node struct {
	kind       byte // '{', '[', '"' (string) or 'v' (number, true, false, null)
	start, end int
	depth      int // 0 for the top-level value
	members    []member
}

type member struct {
	key      string
	keyStart int
	value    *node
}

// get returns key's member; of duplicates the last, the one JSON.parse,
// encoding/json and so the clients use, so that reads and edits land in
// the copy the client reads.
func (n *node) get(key string) *member {
	if n == nil || n.kind != '{' {
		return nil
	}
	for i := len(n.members) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return &n.members[i]
		}
	}
	return nil
}

func (m *member) valueOrNil() *node {
	if m == nil {
		return nil
	}
	return m.value
}

// jsonDoc is a parsed file: the original bytes, the same bytes with
// comments and trailing commas blanked out (same offsets, valid JSON), and
// the tree.
type jsonDoc struct {
	src, std []byte
	root     *node
}

// parseJSONC parses JSON with comments and trailing commas.
func parseJSONC(src []byte) (*jsonDoc, error) {
	std := standardize(src)
	var probe any
	if err := json.Unmarshal(std, &probe); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) && syn.Offset <= int64(len(src)) {
			return nil, fmt.Errorf("line %d: %v", bytes.Count(src[:syn.Offset], []byte("\n"))+1, err)
		}
		return nil, err
	}
	p := &jsonParser{b: std}
	root, err := p.value(0)
	if err != nil {
		return nil, err
	}
	return &jsonDoc{src: src, std: std, root: root}, nil
}

// standardize blanks out comments and trailing commas with spaces, keeping
// newlines, so that offsets into the result are offsets into src.
func standardize(src []byte) []byte {
	b := bytes.Clone(src)
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			end := bytes.Index(b[i+2:], []byte("*/"))
			stop := len(b)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if b[i] != '\n' && b[i] != '\r' {
					b[i] = ' '
				}
			}
			i--
		}
	}
	// Trailing commas: a comma whose next non-blank byte closes.
	inString = false
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ',':
			j := i + 1
			for j < len(b) && isSpace(b[j]) {
				j++
			}
			if j < len(b) && (b[j] == '}' || b[j] == ']') {
				b[i] = ' '
			}
		}
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// jsonParser records byte ranges of valid JSON (std bytes).
type jsonParser struct {
	b   []byte
	pos int
}

func (p *jsonParser) skip() {
	for p.pos < len(p.b) && isSpace(p.b[p.pos]) {
		p.pos++
	}
}

func (p *jsonParser) value(depth int) (*node, error) {
	p.skip()
	if p.pos >= len(p.b) {
		return nil, errors.New("unexpected end of JSON")
	}
	n := &node{start: p.pos, depth: depth}
	switch c := p.b[p.pos]; c {
	case '{':
		n.kind = '{'
		p.pos++
		for {
			p.skip()
			if p.b[p.pos] == '}' {
				p.pos++
				break
			}
			if p.b[p.pos] == ',' {
				p.pos++
				continue
			}
			keyStart := p.pos
			if err := p.str(); err != nil {
				return nil, err
			}
			var key string
			if err := json.Unmarshal(p.b[keyStart:p.pos], &key); err != nil {
				return nil, err
			}
			p.skip()
			p.pos++ // ':'
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			n.members = append(n.members, member{key: key, keyStart: keyStart, value: v})
		}
	case '[':
		n.kind = '['
		p.pos++
		for {
			p.skip()
			if p.b[p.pos] == ']' {
				p.pos++
				break
			}
			if p.b[p.pos] == ',' {
				p.pos++
				continue
			}
			if _, err := p.value(depth + 1); err != nil {
				return nil, err
			}
		}
	case '"':
		n.kind = '"'
		if err := p.str(); err != nil {
			return nil, err
		}
	default:
		n.kind = 'v'
		for p.pos < len(p.b) && !isSpace(p.b[p.pos]) && !strings.ContainsRune(",]}", rune(p.b[p.pos])) {
			p.pos++
		}
	}
	n.end = p.pos
	return n, nil
}

func (p *jsonParser) str() error {
	p.pos++ // opening quote
	for p.pos < len(p.b) {
		switch p.b[p.pos] {
		case '\\':
			p.pos += 2
			continue
		case '"':
			p.pos++
			return nil
		}
		p.pos++
	}
	return errors.New("unterminated string")
}

// find returns the object at path (keys from the top), or nil.
func (d *jsonDoc) find(path []string) *node {
	n := d.root
	for _, k := range path {
		m := n.get(k)
		if m == nil {
			return nil
		}
		n = m.value
	}
	if n.kind != '{' {
		return nil
	}
	return n
}

// style is how the file lays itself out, for the bytes an edit adds.
type style struct {
	unit    string // one level of indentation
	newline string
}

func (d *jsonDoc) style() style {
	s := style{unit: "  ", newline: "\n"}
	if bytes.Contains(d.src, []byte("\r\n")) {
		s.newline = "\r\n"
	}
	if d.root.kind == '{' && len(d.root.members) > 0 {
		if ws := lineIndent(d.src, d.root.members[0].keyStart); ws != "" {
			s.unit = ws
		}
	}
	return s
}

// lineIndent is the run of blanks between the start of pos's line and pos,
// or "" when something else comes first on that line.
func lineIndent(b []byte, pos int) string {
	start := bytes.LastIndexByte(b[:pos], '\n') + 1
	ws := string(b[start:pos])
	if strings.Trim(ws, " \t") != "" {
		return ""
	}
	return ws
}

// memberIndent is the indentation of obj's members: as its first member
// has it, else one unit deeper than obj.
func (d *jsonDoc) memberIndent(obj *node, st style) string {
	if len(obj.members) > 0 {
		if ws := lineIndent(d.src, obj.members[0].keyStart); ws != "" {
			return ws
		}
	}
	return strings.Repeat(st.unit, obj.depth+1)
}

// encodeValue renders v as JSON laid out for a member indented by indent.
func encodeValue(v any, indent string, st style) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(indent, st.unit)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	out := strings.TrimRight(buf.String(), "\n")
	if st.newline != "\n" {
		out = strings.ReplaceAll(out, "\n", st.newline)
	}
	return out, nil
}

func splice(b []byte, start, end int, text string) []byte {
	out := make([]byte, 0, len(b)-(end-start)+len(text))
	out = append(out, b[:start]...)
	out = append(out, text...)
	return append(out, b[end:]...)
}

// setMember sets key to value in the object at path, creating the objects
// on the path that are missing. An existing member's value is replaced;
// a new member goes after the object's last one.
func setMember(src []byte, path []string, key string, value any) ([]byte, error) {
	d, err := parseJSONC(src)
	if err != nil {
		return nil, err
	}
	if d.root.kind != '{' {
		return nil, errors.New("the file is not a JSON object")
	}
	st := d.style()
	// Walk down as far as the path exists; wrap the rest around the value.
	obj := d.root
	for i, k := range path {
		m := obj.get(k)
		if m == nil || m.value.kind != '{' {
			for j := len(path) - 1; j > i; j-- {
				value = orderedObject{{key, value}}
				key = path[j]
			}
			value, key = orderedObject{{key, value}}, k
			if m != nil { // present but not an object (null, say): replace it
				return replaceValue(d, m, value, st)
			}
			return insertMember(d, obj, k, value, st)
		}
		obj = m.value
	}
	if m := obj.get(key); m != nil {
		return replaceValue(d, m, value, st)
	}
	return insertMember(d, obj, key, value, st)
}

func replaceValue(d *jsonDoc, m *member, value any, st style) ([]byte, error) {
	indent := lineIndent(d.src, m.keyStart)
	if indent == "" {
		indent = strings.Repeat(st.unit, m.value.depth)
	}
	text, err := encodeValue(value, indent, st)
	if err != nil {
		return nil, err
	}
	return splice(d.src, m.value.start, m.value.end, text), nil
}

func insertMember(d *jsonDoc, obj *node, key string, value any, st style) ([]byte, error) {
	k, _ := json.Marshal(key)
	oneLine := !bytes.Contains(d.src[obj.start:obj.end], []byte("\n")) && len(obj.members) > 0
	if oneLine {
		text, err := encodeValue(value, "", style{unit: "", newline: st.newline})
		if err != nil {
			return nil, err
		}
		text = strings.ReplaceAll(text, "\n", "")
		last := obj.members[len(obj.members)-1].value
		return splice(d.src, last.end, last.end, ", "+string(k)+": "+text), nil
	}
	indent := d.memberIndent(obj, st)
	text, err := encodeValue(value, indent, st)
	if err != nil {
		return nil, err
	}
	entry := indent + string(k) + ": " + text
	if len(obj.members) == 0 {
		closing := lineIndent(d.src, obj.start)
		if closing == "" {
			closing = strings.Repeat(st.unit, obj.depth)
		}
		inner := d.src[obj.start+1 : obj.end-1]
		if len(bytes.TrimSpace(inner)) == 0 { // {} or blanks only
			return splice(d.src, obj.start+1, obj.end-1, st.newline+entry+st.newline+closing), nil
		}
		return splice(d.src, obj.start+1, obj.start+1, st.newline+entry), nil // keep the comments inside
	}
	// After the last member: at the end of its line when only blanks,
	// a comment or a trailing comma follow it there, so a comment stays
	// with the member it was written for.
	last := obj.members[len(obj.members)-1].value
	eol := last.end
	for eol < len(d.std) && (d.std[eol] == ' ' || d.std[eol] == '\t') {
		eol++
	}
	if eol < len(d.std) && (d.std[eol] == '\n' || d.std[eol] == '\r') {
		if trailingComma(d.src[last.end:eol]) { // JSONC in that style: ours gets one too
			return splice(d.src, eol, eol, st.newline+entry+","), nil
		}
		out := splice(d.src, eol, eol, st.newline+entry)
		return splice(out, last.end, last.end, ","), nil
	}
	return splice(d.src, last.end, last.end, ","+st.newline+entry), nil
}

// deleteMember removes key from the object at path, with its comma and,
// when it had them to itself, its lines. It reports whether key was there.
func deleteMember(src []byte, path []string, key string) ([]byte, bool, error) {
	d, err := parseJSONC(src)
	if err != nil {
		return nil, false, err
	}
	obj := d.find(path)
	if obj == nil {
		return src, false, nil
	}
	i := -1
	for j := range obj.members {
		if obj.members[j].key == key {
			i = j
		}
	}
	if i < 0 {
		return src, false, nil
	}
	m := obj.members[i]
	switch {
	case len(obj.members) == 1:
		return splice(src, obj.start+1, obj.end-1, ""), true, nil
	case i < len(obj.members)-1:
		start := m.keyStart
		if ws := lineIndent(src, start); ws != "" || bytes.LastIndexByte(src[:start], '\n')+1 == start {
			start -= len(ws)
		}
		// Past the comma, and past the end of the line when nothing but
		// blanks or a comment follow on it.
		end := m.value.end
		for end < len(d.std) && (d.std[end] == ' ' || d.std[end] == '\t' || d.std[end] == ',') {
			end++
		}
		if end < len(d.std) && d.std[end] == '\r' {
			end++
		}
		if end < len(d.std) && d.std[end] == '\n' {
			end++
		}
		if cutsComment(src, m.value.end, end) {
			// A block comment that goes on past the cut stays whole:
			// take only the blanks and the comma before it.
			end = m.value.end
			for end < len(src) && (src[end] == ' ' || src[end] == '\t' || src[end] == ',') {
				end++
			}
		}
		return splice(src, start, end, ""), true, nil
	default: // the last of several: from the end of the one before
		end := m.value.end
		for end < len(d.std) && (d.std[end] == ' ' || d.std[end] == '\t') {
			end++
		}
		if ws := lineIndent(src, m.keyStart); (ws != "" || bytes.LastIndexByte(src[:m.keyStart], '\n')+1 == m.keyStart) &&
			trailingComma(src[m.value.end:end]) && end < len(src) && src[end] == '\n' {
			// JSONC whose members all end in a comma: take the lines,
			// the one before keeps its comma.
			return splice(src, m.keyStart-len(ws), end+1, ""), true, nil
		}
		if end < len(d.std) && d.std[end] != '\n' && d.std[end] != '\r' || cutsComment(src, m.value.end, end) {
			end = m.value.end // something else follows on the line: keep it
		}
		return splice(src, obj.members[i-1].value.end, end, ""), true, nil
	}
}

// cutsComment reports whether src[from:to], blanks, commas and comments
// after a value, ends inside a block comment: d.std blanks comments but
// keeps their line ends, so a cut at a line end found there can fall
// inside "/* ... */" that spans lines.
func cutsComment(src []byte, from, to int) bool {
	for i := from; i+1 < to; i++ {
		switch {
		case src[i] == '/' && src[i+1] == '/':
			for i < to && src[i] != '\n' {
				i++
			}
		case src[i] == '/' && src[i+1] == '*':
			closed := bytes.Index(src[i+2:to], []byte("*/"))
			if closed < 0 {
				return true
			}
			i += 2 + closed + 1
		}
	}
	return false
}

// trailingComma reports whether b (what follows a value on its line)
// starts with a comma.
func trailingComma(b []byte) bool {
	b = bytes.TrimLeft(b, " \t")
	return len(b) > 0 && b[0] == ','
}

// rawMember returns the raw (standardized) bytes of key's value in the
// object at path, or nil.
func (d *jsonDoc) rawMember(path []string, key string) json.RawMessage {
	m := d.find(path).get(key)
	if m == nil {
		return nil
	}
	return json.RawMessage(d.std[m.value.start:m.value.end])
}

// orderedObject is a JSON object that keeps its keys in the order given.
type orderedObject []kv

type kv struct {
	Key   string
	Value any
}

func (o orderedObject) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, e := range o {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, err := json.Marshal(e.Key)
		if err != nil {
			return nil, err
		}
		buf.Write(k)
		buf.WriteByte(':')
		var v bytes.Buffer
		enc := json.NewEncoder(&v)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(e.Value); err != nil {
			return nil, err
		}
		buf.Write(bytes.TrimRight(v.Bytes(), "\n"))
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
