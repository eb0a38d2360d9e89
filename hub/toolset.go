package hub

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/mcp-hub/mcp-hub/config"
)

// allows reports whether toolset ts lets a tool through. A nil toolset
// allows everything.
func allows(ts *config.Toolset, t *Tool) bool {
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

// validateToolset checks a toolset against the live catalog; every problem is
// reported at once. Servers that are not connected yet cannot be checked
// tool by tool and are skipped.
func validateToolset(ts *config.Toolset, name string, h *Hub, c *Catalog) error {
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
func (h *Hub) Toolset(name string) (*config.Toolset, error) {
	if name == "" {
		return nil, nil
	}
	ts, ok := h.Config().Toolsets[name]
	if !ok || ts == nil {
		return nil, fmt.Errorf("toolset '%s' not found; toolsets: %s", name, strings.Join(sortedKeys(h.Config().Toolsets), ", "))
	}
	return ts, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
