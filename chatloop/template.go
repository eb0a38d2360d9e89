package chatloop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"github.com/mcp-hub/mcp-hub/config"
)

// maxPromptBytes bounds what a system prompt template may produce: a
// template that ranges over a huge number would otherwise build an
// unbounded prompt.
const maxPromptBytes = 1 << 20

// Template is one entry of hub.yaml's templates section: a Go
// text/template that renders a system prompt from the tools offered.
type Template struct {
	Name string
	// Source is where the text came from: the file's path as written in
	// hub.yaml, or "hub.yaml" for inline text.
	Source string
	// firstLine is the hub.yaml line of an inline template's first line, so
	// errors point into the user's file; 1 for files.
	firstLine int
	tmpl      *template.Template
}

// TemplateData is what a template receives.
type TemplateData struct {
	// Tools are the tools offered on this model call, in tools/list order.
	Tools []TemplateTool
	// Model is the model's name in hub.yaml.
	Model string
	// Default is the built-in system prompt, for templates that extend it.
	Default string
}

// TemplateTool is one tool as a template sees it.
type TemplateTool struct {
	Name        string
	Description string
	// Schema is the tool's input schema as compact JSON.
	Schema string
}

// templateFuncs are available in every template: json marshals a value
// (compact), indent prefixes every line.
var templateFuncs = template.FuncMap{
	"json": func(v any) (string, error) {
		b, err := json.Marshal(v)
		return string(b), err
	},
	"indent": func(prefix, s string) string {
		return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
	},
}

// parseTemplates parses the templates section as package config read it
// (the text, from its file or hub.yaml). Every template is parsed now, so
// a syntax error is a config error naming the file and line.
func parseTemplates(specs map[string]config.Template) (map[string]*Template, error) {
	out := map[string]*Template{}
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		spec := specs[name]
		t := &Template{Name: name, Source: spec.Source, firstLine: spec.FirstLine}
		tmpl, err := template.New(t.Source).Funcs(templateFuncs).Option("missingkey=error").Parse(spec.Text)
		if err != nil {
			errs = append(errs, t.wrap(err))
			continue
		}
		t.tmpl = tmpl
		out[name] = t
	}
	return out, errors.Join(errs...)
}

// tmplLine finds text/template's "template: NAME:LINE:" position.
var tmplLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^template: (.*?):(\d+):`) })

// wrap turns a parse or execution error into one naming the template's
// file and the line in it (for inline templates, the line of hub.yaml).
func (t *Template) wrap(err error) error {
	msg := err.Error()
	m := tmplLine().FindStringSubmatchIndex(msg)
	if m == nil || msg[m[2]:m[3]] != t.Source {
		return fmt.Errorf("templates.%s (%s): %w", t.Name, t.Source, err)
	}
	n, _ := strconv.Atoi(msg[m[4]:m[5]])
	line := t.firstLine + n - 1
	rest := strings.TrimSpace(msg[m[1]:])
	return fmt.Errorf("%s:%d: templates.%s: %s", t.Source, line, t.Name, rest)
}

// errPromptTooLarge stops a template past maxPromptBytes.
var errPromptTooLarge = fmt.Errorf("the rendered prompt is larger than %d bytes", maxPromptBytes)

type limitedBuffer struct{ bytes.Buffer }

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > maxPromptBytes {
		return 0, errPromptTooLarge
	}
	return b.Buffer.Write(p)
}

// Render executes the template for one model call.
func (t *Template) Render(data TemplateData) (string, error) {
	var b limitedBuffer
	if err := t.tmpl.Execute(&b, data); err != nil {
		if errors.Is(err, errPromptTooLarge) {
			return "", fmt.Errorf("templates.%s (%s): %w", t.Name, t.Source, errPromptTooLarge)
		}
		return "", t.wrap(err)
	}
	return b.String(), nil
}

// templateData builds a template's view of the tools of one call.
func templateData(model string, defs []ToolDef) TemplateData {
	d := TemplateData{Model: model, Default: DefaultSystemPrompt, Tools: make([]TemplateTool, len(defs))}
	for i, t := range defs {
		var b bytes.Buffer
		if json.Compact(&b, t.InputSchema) != nil {
			b.Reset()
			b.Write(t.InputSchema)
		}
		d.Tools[i] = TemplateTool{Name: t.Name, Description: t.Description, Schema: b.String()}
	}
	return d
}
