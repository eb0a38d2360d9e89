package config

import (
	"strings"
	"testing"
)

// TestConfigErrorsQuoteNothing: errors about the config name the file,
// the line and the key, never a value or the file's text: not a short
// ${VAR} value (below the length redaction needs) that fails to decode,
// not the lines of a file that is not a config at all.
func TestConfigErrorsQuoteNothing(t *testing.T) {
	const marker = "MRK7q"
	t.Setenv("CQ_SHORT", "s3cr"+marker) // 9 characters: yaml.v3 would quote it whole
	tests := []struct{ name, doc, want string }{
		{"secret into an int", "servers:\n  a: {builtin: time}\nmax_sessions: ${CQ_SHORT}\n", "hub.yaml:3: key max_sessions: expected a whole number"},
		{"secret into a bool", "servers:\n  a:\n    builtin: time\n    disabled: ${CQ_SHORT}\n", "hub.yaml:4: server 'a': key servers.a.disabled: expected true or false"},
		{"secret into a duration", "servers:\n  a:\n    builtin: time\n    timeout: ${CQ_SHORT}\n", "hub.yaml:4: server 'a': invalid duration: write it like 30s or 2m"},
		{"secret into a list", "servers:\n  a:\n    command: x\n    args: ${CQ_SHORT}\n", "hub.yaml:4: server 'a': key servers.a.args: expected a list"},
		{"literal into a float", "servers:\n  a: {builtin: time}\nauth:\n  tokens: [abcdefgh]\n  rate_limit: {requests_per_second: " + marker + "}\n", "hub.yaml:5: key auth.rate_limit.requests_per_second: expected a number"},
		{"text lines", "root:$6$" + marker + ":19000:0:99999:7:::\nsecond line " + marker + "\nthird\n", "hub.yaml:2: invalid YAML: could not find expected ':'"},
		{"text lines, one scalar", "first line " + marker + "\nsecond line " + marker + "\n", "hub.yaml:1: this is not an mcp-hub config"},
		{"key-value lines", "password: " + marker + "\nuser: " + marker + "x\n", "hub.yaml:1: this is not an mcp-hub config"},
		{"a list", "- " + marker + "\n- b\n", "hub.yaml:1: this is not an mcp-hub config"},
		{"syntax error with an anchor", "servers: &" + marker + "\n  a: {builtin: time}\nx: *" + marker + "x\n", "hub.yaml: invalid YAML: unknown anchor referenced"},
		{"syntax error in a quoted line", "servers:\n  a: {builtin: time}\n\"" + marker + " \\q\"\n", "hub.yaml:3: invalid YAML: found unknown escape character"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig("hub.yaml", []byte(tc.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error:\n got: %s\nwant: %s", err, tc.want)
			}
			if strings.Contains(err.Error(), marker) {
				t.Errorf("the error quotes the file or the variable: %s", err)
			}
		})
	}
}
