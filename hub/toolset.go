package hub

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Toolset is a named subset of the catalog that a session can choose
// (serve --toolset, /mcp/<toolset>, chat --toolset). Tool names are the
// upstream (unprefixed) names.
type Toolset struct {
	Description string                    `yaml:"description"`
	Servers     map[string]*ToolSelection `yaml:"servers"`
}

// ToolSelection is one server's entry in a toolset:
// true (all tools), false (none), [a, b] (only these) or {exclude: [a, b]}.
type ToolSelection struct {
	All     bool
	Include []string
	Exclude []string
	// line is where the entry is in the config, for errors.
	line int
}

// UnmarshalYAML accepts the four shapes.
func (s *ToolSelection) UnmarshalYAML(n *yaml.Node) error {
	s.line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("line %d: a toolset server entry is true, false, a list of tools or {exclude: [...]}", n.Line)
		}
		s.All = b
		return nil
	case yaml.SequenceNode:
		s.Include = []string{}
		return n.Decode(&s.Include)
	case yaml.MappingNode:
		var m struct {
			Exclude []string `yaml:"exclude"`
		}
		if err := n.Decode(&m); err != nil {
			return err
		}
		if len(n.Content) != 2 || n.Content[0].Value != "exclude" {
			return fmt.Errorf("line %d: the only key of a toolset server entry is 'exclude'", n.Line)
		}
		s.All, s.Exclude = true, m.Exclude
		return nil
	}
	return fmt.Errorf("line %d: a toolset server entry is true, false, a list of tools or {exclude: [...]}", n.Line)
}

// allows reports whether the toolset lets a tool through. A nil toolset
// allows everything.
func (ts *Toolset) allows(t *Tool) bool {
	if ts == nil {
		return true
	}
	sel, ok := ts.Servers[t.Server]
	if !ok || sel == nil {
		return false
	}
	if sel.Include != nil {
		return slices.Contains(sel.Include, t.Original)
	}
	return sel.All && !slices.Contains(sel.Exclude, t.Original)
}

// validate checks a toolset against the live catalog; every problem is
// reported at once. Servers that are not connected yet cannot be checked
// tool by tool and are skipped.
func (ts *Toolset) validate(name string, h *Hub, c *Catalog) error {
	if ts == nil {
		return nil
	}
	var errs []string
	for _, srv := range sortedKeys(ts.Servers) {
		sel := ts.Servers[srv]
		u, ok := h.live.Load().byName[srv]
		if !ok {
			errs = append(errs, fmt.Sprintf("toolset '%s': Server '%s' not found in configuration", name, srv))
			continue
		}
		if sel == nil || (sel.Include == nil && sel.Exclude == nil) {
			continue
		}
		if _, err := u.Session(); err != nil {
			continue
		}
		var available []string
		for _, t := range c.Tools {
			if t.Server == srv {
				available = append(available, t.Original)
			}
		}
		check := func(tools []string, suffix string) {
			for _, tool := range tools {
				if !slices.Contains(available, tool) {
					errs = append(errs, fmt.Sprintf("toolset '%s': Tool '%s' not found in server '%s'%s. Available: %s",
						name, tool, srv, suffix, strings.Join(available, ", ")))
				}
			}
		}
		check(sel.Include, "")
		check(sel.Exclude, " (specified in exclude list)")
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// Toolset returns the named toolset; "" means all tools (nil).
func (h *Hub) Toolset(name string) (*Toolset, error) {
	if name == "" {
		return nil, nil
	}
	ts, ok := h.Config().Toolsets[name]
	if !ok || ts == nil {
		return nil, fmt.Errorf("toolset '%s' not found; toolsets: %s", name, strings.Join(sortedKeys(h.Config().Toolsets), ", "))
	}
	return ts, nil
}
