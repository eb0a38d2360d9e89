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

// reaches reports whether toolset ts lets a session reach server's
// resources, resource templates, subscriptions, prompts and completions.
// A toolset reaches a server its entry names with anything but false:
// true, an exclude list, or a list of tools (even an empty one, which
// keeps the server's resources and prompts and none of its tools). Its
// tools are allows' to decide, one by one; what is not a tool has no
// finer selection, so a server is in or out whole. A nil toolset reaches
// every server.
func reaches(ts *config.Toolset, server string) bool {
	if ts == nil {
		return true
	}
	sel := ts.Servers[server]
	return sel != nil && (sel.All || sel.Include != nil)
}

// reaches reports whether s's toolset reaches server (see reaches).
func (s *Session) reaches(server string) bool { return reaches(s.toolset.Load(), server) }

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
