package builtin

import (
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// Tool schemas are made when the code is written, not when the hub starts.
// Inferring each tool's JSON Schema from its Go types (jsonschema-go) and
// encoding it for tools/list (twice: the boundary measures every result)
// was most of what the hub allocated at start-up, and the high-water mark
// of its heap stays resident (docs/performance.md, "Idle"). schemas_gen.go
// holds every tool's input and output schema as the JSON that inference
// gives, byte for byte; given as JSON, a schema goes out in tools/list as
// those bytes, and go-sdk still resolves it to validate arguments and
// results. TestToolSchemasGenerated fails when the file and the types
// disagree; `go test ./builtin -run TestToolSchemasGenerated -update`
// writes it again.

// addTool is addToolSchema for a tool whose schemas are all inferred.
func addTool[In, Out any](s *mcp.Server, server string, opts Options, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	_ = addToolSchema(s, server, opts, t, h, nil) // without input, it cannot fail
}

// addToolSchema adds the tool t, handled by h, to the builtin server's s. Its
// schemas are the generated ones; with Options.inferSchemas set (the test
// that generates them), or for a tool the file does not have yet, they are
// inferred from In and Out as mcp.AddTool does, the input schema made by
// input when it is not nil (a schema inference cannot express, like an
// enum).
func addToolSchema[In, Out any](s *mcp.Server, server string, opts Options, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out], input func() (*jsonschema.Schema, error)) error {
	if in, out, ok := toolSchemas(server, t.Name); ok && !opts.inferSchemas {
		t.InputSchema = json.RawMessage(in)
		t.OutputSchema = json.RawMessage(out)
	} else if input != nil {
		schema, err := input()
		if err != nil {
			return err
		}
		t.InputSchema = schema
	}
	mcp.AddTool(s, t, h)
	return nil
}
