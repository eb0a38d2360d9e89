package main

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

func TestParseCallArguments(t *testing.T) {
	tests := []struct {
		args    []string
		want    map[string]any
		wantErr string
	}{
		{nil, map[string]any{}, ""},
		{[]string{`{"a": 5, "b": "x"}`}, map[string]any{"a": 5.0, "b": "x"}, ""},
		{[]string{"a=5", "b=3"}, map[string]any{"a": 5.0, "b": 3.0}, ""},
		{[]string{"name=Ada", "ok=true", "none=null"}, map[string]any{"name": "Ada", "ok": true, "none": nil}, ""},
		{[]string{`tags=["x","y"]`, `id="42"`, "empty="}, map[string]any{"tags": []any{"x", "y"}, "id": "42", "empty": ""}, ""},
		{[]string{"q=a=b"}, map[string]any{"q": "a=b"}, ""},
		{[]string{`obj={"k":1}`}, map[string]any{"obj": map[string]any{"k": 1.0}}, ""},
		{[]string{"plain"}, nil, "not key=value"},
		{[]string{"=5"}, nil, "not key=value"},
		{[]string{"a=1", "a=2"}, nil, "given twice"},
		{[]string{`{"a":`}, nil, "not a JSON object"},
		{[]string{`["a"]`}, nil, "not key=value"},
	}
	for _, tc := range tests {
		got, err := parseCallArguments(tc.args)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseCallArguments(%q) error = %v, want %q", tc.args, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseCallArguments(%q) = %#v, %v; want %#v", tc.args, got, err, tc.want)
		}
	}
}

// Flags after the positional arguments are taken as flags.
func TestPositionalArgs(t *testing.T) {
	tests := []struct {
		argv    []string
		args    []string
		json    bool
		timeout time.Duration
		wantErr string
	}{
		{[]string{"x", "github"}, []string{"github"}, false, time.Minute, ""},
		{[]string{"x", "github", "--timeout", "10s"}, []string{"github"}, false, 10 * time.Second, ""},
		{[]string{"x", "--json", "tool", "a=1", "--timeout=2s"}, []string{"tool", "a=1"}, true, 2 * time.Second, ""},
		{[]string{"x", "tool", "--json", "b=2"}, []string{"tool", "b=2"}, true, time.Minute, ""},
		{[]string{"x", "tool", "--", "--json"}, []string{"tool", "--json"}, false, time.Minute, ""},
		{[]string{"x", "tool", "--unknown", "v"}, []string{"tool", "--unknown", "v"}, false, time.Minute, ""},
		{[]string{"x", "tool", "--timeout"}, nil, false, 0, "needs a value"},
		{[]string{"x", "tool", "--timeout", "soon"}, nil, false, 0, "flag --timeout"},
	}
	for _, tc := range tests {
		var got []string
		var gotErr error
		var asJSON bool
		var timeout time.Duration
		app := &cli.App{
			Commands: []*cli.Command{{
				Name: "x",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "json"},
					&cli.DurationFlag{Name: "timeout", Value: time.Minute},
				},
				Action: func(c *cli.Context) error {
					got, gotErr = positionalArgs(c)
					asJSON, timeout = c.Bool("json"), c.Duration("timeout")
					return nil
				},
			}},
		}
		if err := app.Run(append([]string{"mcp-hub"}, tc.argv...)); err != nil {
			t.Fatal(err)
		}
		if tc.wantErr != "" {
			if gotErr == nil || !strings.Contains(gotErr.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.argv, gotErr, tc.wantErr)
			}
			continue
		}
		if gotErr != nil || !reflect.DeepEqual(got, tc.args) || asJSON != tc.json || timeout != tc.timeout {
			t.Errorf("%q: args %q, json %v, timeout %v, err %v; want %q, %v, %v", tc.argv, got, asJSON, timeout, gotErr, tc.args, tc.json, tc.timeout)
		}
	}
}
