package clientconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// HubEntry is the one server entry install writes: the hub over stdio.
type HubEntry struct {
	Name    string   // the entry's name in the client ("hub")
	Command string   // absolute path of the mcp-hub binary
	Args    []string // --config ABS serve [--toolset T]
}

// value is the entry as the client at loc writes one.
func (h HubEntry) value(loc Location) orderedObject {
	var o orderedObject
	if loc.typed() {
		o = append(o, kv{"type", "stdio"})
	}
	return append(o, kv{"command", h.Command}, kv{"args", h.Args})
}

// InstallResult says what Install changed.
type InstallResult struct {
	Data    []byte   // the new file
	Changed bool     // false: the file already had exactly this
	Added   bool     // the hub entry is new (else it was updated or kept)
	Removed []string // entries --replace removed
	Kept    []string // the other entries, left as they were
}

// Install sets the hub entry in a client file (data may be empty: a new
// file) and, for each name in remove, deletes that entry. An entry of the
// same name that is not mcp-hub is an error, so that install never
// overwrites another server. An existing hub entry with the same command
// and args is left untouched (with any keys the user added to it).
func Install(loc Location, data []byte, hub HubEntry, remove []string, self string) (InstallResult, error) {
	var res InstallResult
	if len(data) == 0 {
		data = []byte("{}\n")
	}
	if err := noDuplicates(loc, data); err != nil {
		return res, err
	}
	servers, err := Parse(loc, data, Env{})
	if err != nil {
		return res, err
	}
	out := data
	found := false
	for _, s := range servers {
		switch {
		case s.Name == hub.Name:
			found = true
			if !s.IsHub(self) {
				return res, fmt.Errorf("%s already has a server named %q that is not mcp-hub (%s): choose another name with --name", loc.Path, hub.Name, s.Transport())
			}
		case slices.Contains(remove, s.Name):
			if out, _, err = deleteMember(out, loc.Section, s.Name); err != nil {
				return res, err
			}
			res.Removed = append(res.Removed, s.Name)
		default:
			res.Kept = append(res.Kept, s.Name)
		}
	}
	if !found || !sameHubEntry(loc, out, hub) {
		if out, err = setMember(out, loc.Section, hub.Name, hub.value(loc)); err != nil {
			return res, err
		}
	}
	res.Added = !found
	res.Data = out
	res.Changed = string(out) != string(data)
	return res, nil
}

// sameHubEntry reports whether the file's hub entry already has the
// command and args install would write.
func sameHubEntry(loc Location, data []byte, hub HubEntry) bool {
	d, err := parseJSONC(data)
	if err != nil {
		return false
	}
	raw := d.rawMember(d.section(loc.Section, ""), hub.Name)
	var got struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
	}
	if raw == nil || json.Unmarshal(raw, &got) != nil {
		return false
	}
	if loc.typed() && got.Type != "stdio" {
		return false
	}
	return got.Command == hub.Command && slices.Equal(got.Args, hub.Args)
}

// Uninstall removes the hub entry named name. It reports false when the
// file has no such entry, and refuses to remove an entry that is not
// mcp-hub.
func Uninstall(loc Location, data []byte, name, self string) ([]byte, bool, error) {
	if err := noDuplicates(loc, data); err != nil {
		return nil, false, err
	}
	servers, err := Parse(loc, data, Env{})
	if err != nil {
		return nil, false, err
	}
	for _, s := range servers {
		if s.Name != name {
			continue
		}
		if !s.IsHub(self) {
			return nil, false, fmt.Errorf("the server %q in %s is not mcp-hub (%s): not removing it", name, loc.Path, s.Transport())
		}
		return deleteMember(data, loc.Section, name)
	}
	return data, false, nil
}

// noDuplicates refuses a file with a key twice on the way to the servers
// object (two "mcpServers", say) or a server name twice in it. The client
// uses the last of duplicates; removing that one would bring the other
// back, so install and uninstall leave the choice to the user.
func noDuplicates(loc Location, data []byte) error {
	d, err := parseJSONC(data)
	if err != nil {
		return fmt.Errorf("%s: %w", loc.Path, err)
	}
	line := func(m member) int { return bytes.Count(data[:m.keyStart], []byte("\n")) + 1 }
	dup := func(obj *node, only string) error {
		first := map[string]member{}
		for _, m := range obj.members {
			if only != "" && m.key != only {
				continue
			}
			if f, ok := first[m.key]; ok {
				return fmt.Errorf("%s has the key %q twice (lines %d and %d); %s uses the last one: remove one of them and run this again", loc.Path, m.key, line(f), line(m), loc.Client)
			}
			first[m.key] = m
		}
		return nil
	}
	section := d.section(loc.Section, "")
	obj := d.root
	for _, k := range section {
		if obj == nil || obj.kind != '{' {
			return nil
		}
		if err := dup(obj, k); err != nil {
			return err
		}
		obj = obj.get(k).valueOrNil()
	}
	if obj == nil || obj.kind != '{' {
		return nil
	}
	return dup(obj, "")
}
