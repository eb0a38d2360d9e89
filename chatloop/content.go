package chatloop

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

// resultParts turns an MCP tool result into provider-neutral parts. Text
// and images keep their content; everything a model cannot take (audio,
// binary resources, links) becomes a one-line description so the model at
// least knows it exists.
func resultParts(res *mcp.CallToolResult) []Part {
	var parts []Part
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, Part{Type: PartText, Text: c.Text})
		case *mcp.ImageContent:
			parts = append(parts, Part{Type: PartImage, MIMEType: c.MIMEType, Data: c.Data})
		case *mcp.AudioContent:
			parts = append(parts, Part{Type: PartResource, MIMEType: c.MIMEType,
				Text: fmt.Sprintf("[audio %s, %d bytes]", orUnknown(c.MIMEType), len(c.Data))})
		case *mcp.EmbeddedResource:
			parts = append(parts, embeddedParts(c.Resource)...)
		case *mcp.ResourceLink:
			desc := fmt.Sprintf("[resource link %s", c.URI)
			if c.Name != "" {
				desc += " (" + c.Name + ")"
			}
			if c.MIMEType != "" {
				desc += " " + c.MIMEType
			}
			if c.Description != "" {
				desc += ": " + c.Description
			}
			parts = append(parts, Part{Type: PartResource, URI: c.URI, MIMEType: c.MIMEType, Text: desc + "]"})
		default:
			// Future content kinds: pass their JSON rather than drop them.
			b, err := json.Marshal(c)
			if err == nil {
				parts = append(parts, Part{Type: PartText, Text: string(b)})
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, Part{Type: PartText, Text: string(b)})
		}
	}
	return parts
}

func embeddedParts(r *mcp.ResourceContents) []Part {
	if r == nil {
		return nil
	}
	switch {
	case r.Text != "":
		return []Part{{Type: PartText, URI: r.URI, MIMEType: r.MIMEType,
			Text: fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text)}}
	case strings.HasPrefix(r.MIMEType, "image/"):
		return []Part{{Type: PartImage, URI: r.URI, MIMEType: r.MIMEType, Data: r.Blob}}
	default:
		return []Part{{Type: PartResource, URI: r.URI, MIMEType: r.MIMEType,
			Text: fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, orUnknown(r.MIMEType), len(r.Blob))}}
	}
}

// summary is the text a part becomes for a model that cannot take it as is.
func (p Part) summary() string {
	switch p.Type {
	case PartImage:
		return fmt.Sprintf("[image %s, %d bytes: not shown, this model does not accept images]", orUnknown(p.MIMEType), len(p.Data))
	default:
		return p.Text
	}
}

// resultText joins the text of parts, summarising the others; used for
// wire formats whose tool results are text only and for logs.
func resultText(parts []Part, keepImages bool) string {
	var b strings.Builder
	for i, p := range parts {
		if p.Type == PartImage && keepImages {
			continue
		}
		if i > 0 && b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(p.summary())
	}
	return b.String()
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
