// Copyright 2026 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package jsonrpc2

import (
	"encoding/json"
	"errors"
	"testing"
)

// TestEncodeResultAsBefore checks that a response is encoded byte for byte
// as the generic path encodes it, for every ID and result shape, and that
// what encodeResult does not write itself takes that path.
func TestEncodeResultAsBefore(t *testing.T) {
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	tests := []struct {
		name   string
		id     ID
		result any
		err    error
		fast   bool // encoded without walking the result again
	}{
		{"int ID", Int64ID(7), map[string]any{"content": []content{{"text", "hi"}}}, nil, true},
		{"zero ID", Int64ID(0), map[string]int{"a": 1}, nil, true},
		{"negative ID", Int64ID(-12), []int{1, 2}, nil, true},
		{"string ID", StringID("mcp-hub-call-1"), "text", nil, true},
		{"string ID to escape", StringID("a\"b<c>&\u2028"), true, nil, true},
		{"raw result with spaces", Int64ID(1), json.RawMessage(` { "a" : [ 1, 2 ] } `), nil, true},
		{"raw result to leave unescaped", Int64ID(1), json.RawMessage(`{"html":"<b>&</b>"}`), nil, true},
		{"marshaler", Int64ID(3), rawMarshaler(`{"x": 1}`), nil, true},
		{"empty object", Int64ID(4), struct{}{}, nil, true},
		{"null result", Int64ID(5), json.RawMessage(`null`), nil, true},
		{"error", Int64ID(6), nil, errors.New("boom"), false},
		{"no result", Int64ID(8), nil, nil, false},
		{"float ID", ID{value: 1.5}, "x", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewResponse(tt.id, tt.result, tt.err)
			if err != nil {
				t.Fatal(err)
			}
			if _, fast := encodeResult(r); fast != tt.fast {
				t.Errorf("fast path %v, want %v", fast, tt.fast)
			}
			got, err := EncodeMessage(r)
			if err != nil {
				t.Fatal(err)
			}
			wire := wireCombined{VersionTag: wireVersion}
			r.marshal(&wire)
			want, err := jsonMarshal(&wire)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("EncodeMessage = %s\nwant            %s", got, want)
			}
		})
	}
}

// TestEncodeResultChecksOthers checks that a result is still checked: one
// that is not JSON is an error, as before.
func TestEncodeResultChecksOthers(t *testing.T) {
	r := &Response{ID: Int64ID(1), Result: json.RawMessage(`{"a":`)}
	if data, err := EncodeMessage(r); err == nil {
		t.Fatalf("EncodeMessage of an invalid result = %s, want an error", data)
	}
}

type rawMarshaler string

func (m rawMarshaler) MarshalJSON() ([]byte, error) { return []byte(m), nil }
