package clientconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// ReadFile reads the servers of one location. A file that does not exist
// has none (found is false); a file that does not parse is an error.
func ReadFile(loc Location, e Env) (servers []Server, found bool, err error) {
	data, err := os.ReadFile(loc.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	servers, err = Parse(loc, data, e)
	return servers, true, err
}

// Parse reads the servers of a location from the file's bytes, in file
// order.
func Parse(loc Location, data []byte, e Env) ([]Server, error) {
	d, err := parseJSONC(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loc.Path, err)
	}
	section := d.section(loc.Section, e.OS)
	obj := d.find(section)
	if obj == nil {
		return nil, nil
	}
	var out []Server
	for _, m := range obj.members {
		s := parseEntry(m.key, loc.Path, d.std[m.value.start:m.value.end], e)
		out = append(out, s)
	}
	return out, nil
}

// section resolves a Claude Code project key: the file may spell the
// project directory with the other slash, or another case, on Windows.
func (d *jsonDoc) section(path []string, goos string) []string {
	if len(path) != 3 || path[0] != "projects" || goos != "windows" || d.find(path) != nil {
		return path
	}
	projects := d.find(path[:1])
	if projects == nil {
		return path
	}
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, `\`, "/")) }
	for _, m := range projects.members {
		if norm(m.key) == norm(path[1]) {
			return []string{"projects", m.key, path[2]}
		}
	}
	return path
}

// ReadClient reads every config file of a client (Locations) and returns
// its servers as the client sees them: where two files define a name, the
// later file's entry wins and the other is returned with Skip set.
func ReadClient(client string, e Env) (servers []Server, files []string, err error) {
	locs, err := Locations(client, e)
	if err != nil {
		return nil, nil, err
	}
	index := map[string]int{}
	for _, loc := range locs {
		got, found, err := ReadFile(loc, e)
		if err != nil {
			return nil, nil, err
		}
		if !found {
			continue
		}
		if len(files) == 0 || files[len(files)-1] != loc.Path {
			files = append(files, loc.Path)
		}
		for _, s := range got {
			if i, ok := index[s.Name]; ok {
				if servers[i].Skip == "" {
					servers[i].Skip = fmt.Sprintf("overridden by the entry of the same name in %s", s.From)
				}
			}
			index[s.Name] = len(servers)
			servers = append(servers, s)
		}
	}
	return servers, files, nil
}
