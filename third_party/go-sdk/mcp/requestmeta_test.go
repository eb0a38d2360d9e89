// Copyright 2026 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"encoding/json"
	"testing"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
)

// TestRequestMetaEdges checks the `_meta` values validateRequestMeta reads
// one by one as it read them out of a map of any: null, wrong types and
// other keys.
func TestRequestMetaEdges(t *testing.T) {
	const caps = `"io.modelcontextprotocol/clientCapabilities":{"sampling":{}}`
	tests := []struct {
		name     string
		params   string
		wantNew  bool
		wantErr  bool
		wantLog  LoggingLevel
		wantName string // clientInfo's
	}{
		{"_meta null", `{"_meta":null}`, false, false, "", ""},
		{"version not a string", `{"_meta":{"io.modelcontextprotocol/protocolVersion":20260728,` + caps + `}}`, false, false, "", ""},
		{"version null", `{"_meta":{"io.modelcontextprotocol/protocolVersion":null,` + caps + `}}`, false, false, "", ""},
		{"older version", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25",` + caps + `}}`, false, false, "", ""},
		{"key in another case", `{"_meta":{"io.modelcontextprotocol/ProtocolVersion":"2026-07-28",` + caps + `}}`, false, false, "", ""},
		{"escaped version", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026\u002d07-28",` + caps + `}}`, true, false, "", ""},
		{"clientInfo null", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":null,` + caps + `}}`, false, true, "", ""},
		{"clientInfo", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c","name":"d","version":"1"},` + caps + `}}`, true, false, "", "d"},
		{"capabilities null", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":null}}`, false, true, "", ""},
		{"capabilities not an object", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}}`, false, true, "", ""},
		{"logLevel not a string", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":3,` + caps + `}}`, true, false, "", ""},
		{"logLevel", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/logLevel":"debug",` + caps + `}}`, true, false, "debug", ""},
		{"other keys", `{"name":"x","arguments":{"a":[1,{"b":2}]},"_meta":{"progressToken":7,"x":{"y":[null]},"io.modelcontextprotocol/protocolVersion":"2026-07-28",` + caps + `}}`, true, false, "", ""},
	}
	id, err := jsonrpc.MakeID("test")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &jsonrpc.Request{Method: methodCallTool, Params: json.RawMessage(tt.params), ID: id}
			vm, err := validateRequestMeta(req)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want one: %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if vm.usesNewProtocol != tt.wantNew || vm.logLevel != tt.wantLog {
				t.Errorf("usesNewProtocol %v, logLevel %q; want %v, %q", vm.usesNewProtocol, vm.logLevel, tt.wantNew, tt.wantLog)
			}
			if tt.wantName != "" && (vm.initializeParams.ClientInfo == nil || vm.initializeParams.ClientInfo.Name != tt.wantName) {
				t.Errorf("clientInfo %+v, want name %q", vm.initializeParams.ClientInfo, tt.wantName)
			}
			if vm.usesNewProtocol && vm.initializeParams.Capabilities == nil {
				t.Error("no capabilities")
			}
		})
	}
}
