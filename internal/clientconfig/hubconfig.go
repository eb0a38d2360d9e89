package clientconfig

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcp-hub/mcp-hub/config"
)

// The hub's own config is hub.yaml (or a JSON file in Claude Desktop's
// shape). Import appends servers to it without touching anything else:
// in YAML the new entries are spliced in as text at the end of the
// `servers:` block, located with yaml.v3's node API, so comments, blank
// lines, order and quoting of the rest stay byte for byte; in JSON they
// are added with the same in-place editor as client files.

// HubServers lists the servers a hub config already has, in file order,
// with their settings as written (no ${VAR} expansion): config.Servers,
// the hub's own reading of the file. data may be empty.
func HubServers(path string, data []byte) ([]string, map[string]config.Upstream, error) {
	order, servers, err := config.Servers(path, data)
	if err != nil {
		return nil, nil, err
	}
	configs := make(map[string]config.Upstream, len(servers))
	for name, s := range servers {
		configs[name] = s.Upstream
	}
	return order, configs, nil
}

// AddToHub returns the hub config with servers added (data empty: a new
// file, whose header says where the servers came from).
func AddToHub(path string, data []byte, servers []Server, from []string) ([]byte, error) {
	if len(servers) == 0 {
		return data, nil
	}
	if isJSONPath(path) {
		if len(bytes.TrimSpace(data)) == 0 {
			data = []byte("{\n  \"mcpServers\": {}\n}\n")
		}
		loc := FileLocation("", path, data)
		var err error
		for _, s := range servers {
			if data, err = setMember(data, loc.Section, s.Name, jsonServer(s)); err != nil {
				return nil, err
			}
		}
		return data, nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return newHubYAML(servers, from)
	}
	out, err := spliceYAML(data, servers)
	if err == nil {
		return out, nil
	}
	// A layout the splice does not handle (flow style, say): through the
	// node API, which keeps comments and order but not blank lines.
	return reencodeYAML(data, servers)
}

func isJSONPath(p string) bool { return strings.EqualFold(filepath.Ext(p), ".json") }

// serverNode is a server as hub.yaml writes it: args as a flow list, env
// and headers in the client's key order.
func serverNode(s Server) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	add := func(k string, v *yaml.Node) { m.Content = append(m.Content, str(k), v) }
	c := s.Config
	if c.Command != "" {
		add("command", str(c.Command))
	}
	if len(c.Args) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, a := range c.Args {
			seq.Content = append(seq.Content, quoted(a))
		}
		add("args", seq)
	}
	if len(c.Env) > 0 {
		add("env", mapNode(c.Env, s.EnvOrder))
	}
	if c.Cwd != "" {
		add("cwd", str(c.Cwd))
	}
	if c.URL != "" {
		add("url", str(c.URL))
	}
	if c.Transport != "" {
		add("transport", str(c.Transport))
	}
	if len(c.Headers) > 0 {
		add("headers", mapNode(c.Headers, s.HeaderOrder))
	}
	return m
}

func str(v string) *yaml.Node {
	n := &yaml.Node{}
	n.SetString(v)
	return n
}

// quoted is a string in double quotes: args such as -y or 8080 read as
// what they are.
func quoted(v string) *yaml.Node {
	n := str(v)
	if n.Style == 0 {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func mapNode(m map[string]string, order []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	keys := slices.Clone(order)
	for k := range m {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	for _, k := range keys {
		n.Content = append(n.Content, str(k), quoted(m[k]))
	}
	return n
}

func jsonServer(s Server) orderedObject {
	c := s.Config
	var o orderedObject
	if c.Command != "" {
		o = append(o, kv{"command", c.Command})
	}
	if len(c.Args) > 0 {
		o = append(o, kv{"args", c.Args})
	}
	if len(c.Env) > 0 {
		o = append(o, kv{"env", orderedMap(c.Env, s.EnvOrder)})
	}
	if c.Cwd != "" {
		o = append(o, kv{"cwd", c.Cwd})
	}
	if c.URL != "" {
		o = append(o, kv{"url", c.URL})
	}
	if c.Transport != "" {
		o = append(o, kv{"transport", c.Transport})
	}
	if len(c.Headers) > 0 {
		o = append(o, kv{"headers", orderedMap(c.Headers, s.HeaderOrder)})
	}
	return o
}

func orderedMap(m map[string]string, order []string) orderedObject {
	var o orderedObject
	for _, k := range order {
		o = append(o, kv{k, m[k]})
	}
	for k, v := range m {
		if !slices.Contains(order, k) {
			o = append(o, kv{k, v})
		}
	}
	return o
}

// encodeEntries renders servers as `name:` blocks with the given
// indentation unit, each line prefixed by indent.
func encodeEntries(servers []Server, indent string, unit int) (string, error) {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	for _, s := range servers {
		doc.Content = append(doc.Content, str(s.Name), serverNode(s))
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(unit)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	enc.Close()
	var out strings.Builder
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			out.WriteString(indent + line)
		}
	}
	return out.String(), nil
}

func newHubYAML(servers []Server, from []string) ([]byte, error) {
	body, err := encodeEntries(servers, "  ", 2)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("# mcp-hub configuration (README.md, \"Configuration\"), made by `mcp-hub import`\n")
	for _, f := range from {
		b.WriteString("# from " + f + "\n")
	}
	b.WriteString("# Values copied from a client's config (tokens in env and headers) are here\n" +
		"# as they were there: keep this file private, or replace them with ${VAR}.\n\nservers:\n")
	b.WriteString(body)
	b.WriteString("\n# Tool discovery: with it on, deferred servers' tools stay out of the\n" +
		"# client's tool list until the model finds them with search_tools.\n" +
		"# discovery:\n#   enabled: true\n#   defer_all: true\n")
	return []byte(b.String()), nil
}

// spliceYAML inserts the new entries as text after the last line of the
// `servers:` block (before the comments and blank lines that lead into the
// next top-level key), indented like the entries already there.
func spliceYAML(data []byte, servers []Server) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	root := docRoot(&doc)
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, errors.New("the config is not a mapping")
	}
	nl := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		nl = "\r\n"
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	k := -1
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "servers" {
			k = i
		}
	}
	if k < 0 { // no servers section: add one at the end
		body, err := encodeEntries(servers, "  ", 2)
		if err != nil {
			return nil, err
		}
		out := string(data)
		if out != "" && !strings.HasSuffix(out, "\n") {
			out += nl
		}
		return verifySplice(data, []byte(out+nl+"servers:"+nl+withNewline(body, nl)), servers)
	}
	section := root.Content[k+1]
	if section.Kind != yaml.MappingNode || section.Style&yaml.FlowStyle != 0 || len(section.Content) == 0 {
		return nil, errors.New("servers is not a block mapping with entries")
	}
	first := section.Content[0]
	indent := strings.Repeat(" ", first.Column-1)
	unit := 2
	if v := section.Content[1]; v.Kind == yaml.MappingNode && len(v.Content) > 0 && v.Content[0].Column > first.Column {
		unit = v.Content[0].Column - first.Column
	}
	// The line before which to insert (0-based): the next top-level key,
	// or the end, then up past blank lines and top-level comments.
	at := len(lines)
	if k+2 < len(root.Content) {
		at = root.Content[k+2].Line - 1
	}
	for at > 0 {
		t := strings.TrimRight(lines[at-1], "\r\n")
		if strings.TrimSpace(t) == "" || strings.HasPrefix(t, "#") {
			at--
			continue
		}
		break
	}
	body, err := encodeEntries(servers, indent, unit)
	if err != nil {
		return nil, err
	}
	if at > 0 && !strings.HasSuffix(lines[at-1], "\n") {
		lines[at-1] += nl
	}
	out := strings.Join(lines[:at], "") + withNewline(body, nl) + strings.Join(lines[at:], "")
	return verifySplice(data, []byte(out), servers)
}

func withNewline(s, nl string) string {
	if nl != "\n" {
		s = strings.ReplaceAll(s, "\n", nl)
	}
	return s
}

// verifySplice checks that the spliced file reads as the old servers then
// the new ones, with nothing else changed in the document's keys.
func verifySplice(before, after []byte, servers []Server) ([]byte, error) {
	oldNames, _, err := HubServers("hub.yaml", before)
	if err != nil {
		return nil, err
	}
	newNames, configs, err := HubServers("hub.yaml", after)
	if err != nil {
		return nil, fmt.Errorf("spliced config does not parse: %w", err)
	}
	want := slices.Clone(oldNames)
	for _, s := range servers {
		want = append(want, s.Name)
	}
	if !slices.Equal(newNames, want) {
		return nil, fmt.Errorf("spliced config has servers %v, want %v", newNames, want)
	}
	for _, s := range servers {
		if got := configs[s.Name]; got.Command != s.Config.Command || got.URL != s.Config.URL || !slices.Equal(got.Args, s.Config.Args) {
			return nil, fmt.Errorf("spliced server %s reads back differently", s.Name)
		}
	}
	var a, b yaml.Node
	if yaml.Unmarshal(before, &a) == nil && yaml.Unmarshal(after, &b) == nil && len(keys(docRoot(&a))) != len(keys(docRoot(&b)))-boolInt(mappingValue(&a, "servers") == nil) {
		return nil, errors.New("spliced config changed its top-level keys")
	}
	return after, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reencodeYAML adds the servers through the node API and encodes the
// whole document again.
func reencodeYAML(data []byte, servers []Server) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	root := docRoot(&doc)
	if root == nil || root.Kind != yaml.MappingNode {
		return nil, errors.New("the hub config is not a YAML mapping")
	}
	section := mappingValue(&doc, "servers")
	if section == nil {
		section = &yaml.Node{Kind: yaml.MappingNode}
		root.Content = append(root.Content, str("servers"), section)
	}
	if section.Kind != yaml.MappingNode { // `servers:` with nothing under it
		*section = yaml.Node{Kind: yaml.MappingNode, HeadComment: section.HeadComment, LineComment: section.LineComment}
	}
	section.Style = 0
	for _, s := range servers {
		section.Content = append(section.Content, str(s.Name), serverNode(s))
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	enc.Close()
	return buf.Bytes(), nil
}

func docRoot(doc *yaml.Node) *yaml.Node {
	if doc.Kind == yaml.DocumentNode && len(doc.Content) > 0 {
		return doc.Content[0]
	}
	if doc.Kind == yaml.DocumentNode {
		return nil
	}
	return doc
}

func mappingValue(doc *yaml.Node, key string) *yaml.Node {
	root := docRoot(doc)
	if root == nil || root.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == key {
			return root.Content[i+1]
		}
	}
	return nil
}

func keys(m *yaml.Node) []string {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var out []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		out = append(out, m.Content[i].Value)
	}
	return out
}
