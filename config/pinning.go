package config

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Pinning is the config's `pinning:` key (package pin): `pinning: false`
// turns it off; `pinning: {first_use: trust | quarantine}` sets how a tool
// or server seen for the first time is treated. Left out, pinning is on
// with first_use trust.
type Pinning struct {
	// Off is `pinning: false`.
	Off bool
	// FirstUse is "trust" (pinned as first seen) or "quarantine" (held
	// until `mcp-hub pins approve`); "" is trust.
	FirstUse string
}

// Pinning first-use policies.
const (
	FirstUseTrust      = "trust"
	FirstUseQuarantine = "quarantine"
)

// Enabled reports whether tool definitions are pinned.
func (p Pinning) Enabled() bool { return !p.Off }

// FirstUsePolicy is FirstUse, defaulted.
func (p Pinning) FirstUsePolicy() string {
	if p.FirstUse == "" {
		return FirstUseTrust
	}
	return p.FirstUse
}

// UnmarshalYAML accepts a boolean or a mapping with first_use.
func (p *Pinning) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var on bool
		if err := n.Decode(&on); err != nil {
			return fmt.Errorf("line %d: pinning: use true, false or {first_use: trust | quarantine}", n.Line)
		}
		*p = Pinning{Off: !on}
		return nil
	case yaml.MappingNode:
		*p = Pinning{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch k.Value {
			case "first_use":
				if v.Kind != yaml.ScalarNode || (v.Value != FirstUseTrust && v.Value != FirstUseQuarantine) {
					return fmt.Errorf("line %d: pinning.first_use: use trust or quarantine", v.Line)
				}
				p.FirstUse = v.Value
			default:
				return fmt.Errorf("line %d: pinning: unknown key '%s' (the one key is first_use)", k.Line, k.Value)
			}
		}
		return nil
	}
	return fmt.Errorf("line %d: pinning: use true, false or {first_use: trust | quarantine}", n.Line)
}
