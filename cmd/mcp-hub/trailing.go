package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// positionalArgs returns the command's arguments with its own flags taken
// out wherever they stand: the flag parser stops at the first argument,
// but people write `mcp-hub login github --timeout 10m` too.
func positionalArgs(c *cli.Context) ([]string, error) {
	in := c.Args().Slice()
	var out []string
	for i := 0; i < len(in); i++ {
		a := in[i]
		if a == "--" {
			return append(out, in[i+1:]...), nil
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		f := commandFlag(c, name)
		if !strings.HasPrefix(a, "-") || f == nil {
			out = append(out, a)
			continue
		}
		if _, isBool := f.(*cli.BoolFlag); isBool && !hasValue {
			value = "true"
		} else if !hasValue {
			if i+1 == len(in) {
				return nil, fmt.Errorf("flag %s needs a value", a)
			}
			i++
			value = in[i]
		}
		if err := c.Set(name, value); err != nil {
			return nil, fmt.Errorf("flag %s: %v", a, err)
		}
	}
	return out, nil
}

func commandFlag(c *cli.Context, name string) cli.Flag {
	if c.Command == nil {
		return nil
	}
	for _, f := range c.Command.Flags {
		for _, n := range f.Names() {
			if n == name {
				return f
			}
		}
	}
	return nil
}
