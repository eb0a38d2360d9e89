package config

import (
	"fmt"

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
	// Line is where the entry is in the config, for errors.
	Line int
}

// UnmarshalYAML accepts the four shapes.
func (s *ToolSelection) UnmarshalYAML(n *yaml.Node) error {
	s.Line = n.Line
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
