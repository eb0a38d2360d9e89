package hub

import "testing"

// TestMinifySchema: search results give a schema without its labels, in
// the upstream's key order, and nothing else changes.
func TestMinifySchema(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"labels at schema positions",
			`{"$schema":"http://json-schema.org/draft-07/schema#","title":"argsModel","type":"object","properties":{"title":{"type":"string","title":"Title","default":null},"n":{"type":"integer","default":3}},"required":["title"]}`,
			`{"type":"object","properties":{"title":{"type":"string"},"n":{"type":"integer","default":3}},"required":["title"]}`},
		{"nested schemas",
			`{"type":"array","items":{"title":"I","anyOf":[{"title":"x","type":"string"},{"type":"null"}]},"$defs":{"A":{"title":"A","type":"object"}}}`,
			`{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"null"}]},"$defs":{"A":{"type":"object"}}}`},
		{"data is not a schema", `{"enum":["title"],"examples":[{"title":"keep","default":null}],"const":{"$schema":1}}`,
			`{"enum":["title"],"examples":[{"title":"keep","default":null}],"const":{"$schema":1}}`},
		{"a title that is not a string stays", `{"title":{"type":"string"}}`, `{"title":{"type":"string"}}`},
		{"numbers and text as written", "{ \"default\" : 1.50, \"description\": \"a<b>&c \\u00e9\" }", `{"default":1.50,"description":"a<b>&c \u00e9"}`},
		{"boolean schemas", `{"properties":{"a":true,"b":false},"additionalProperties":false}`, `{"properties":{"a":true,"b":false},"additionalProperties":false}`},
		{"not JSON", `{"a":`, `{"a":`},
	}
	for _, tt := range tests {
		if got := minifySchema([]byte(tt.in)); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
}
