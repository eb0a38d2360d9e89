package chatloop

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"text/template"

	"gopkg.in/yaml.v3"
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

// decodeTemplates reads the templates section: each entry is inline text
// (a string, or {text: ...}) or {file: PATH}, PATH relative to dir (the
// config file's folder). Every template is parsed now, so a syntax error
// is a config error naming the file and line.
func decodeTemplates(n *yaml.Node, dir string, errs *[]error) map[string]*Template {
	out := map[string]*Template{}
	eachEntry("templates", n, errs, func(name string, v *yaml.Node) {
		t := &Template{Name: name}
		var text string
		switch v.Kind {
		case yaml.ScalarNode:
			text, t.Source, t.firstLine = v.Value, "hub.yaml", inlineFirstLine(v)
		case yaml.MappingNode:
			var spec struct {
				File string `yaml:"file"`
				Text string `yaml:"text"`
			}
			if !decodeStrict("templates."+name, v, []string{"file", "text"}, &spec, errs) {
				return
			}
			switch {
			case (spec.File == "") == (spec.Text == ""):
				*errs = append(*errs, fmt.Errorf("line %d: templates.%s: set exactly one of file: or text:", v.Line, name))
				return
			case spec.File != "":
				path := spec.File
				if !filepath.IsAbs(path) && dir != "" {
					path = filepath.Join(dir, path)
				}
				b, err := os.ReadFile(path)
				if err != nil {
					*errs = append(*errs, fmt.Errorf("line %d: templates.%s: %w", v.Line, name, err))
					return
				}
				text, t.Source, t.firstLine = string(b), spec.File, 1
			default:
				for i := 0; i+1 < len(v.Content); i += 2 {
					if v.Content[i].Value == "text" {
						t.firstLine = inlineFirstLine(v.Content[i+1])
					}
				}
				text, t.Source = spec.Text, "hub.yaml"
			}
		default:
			*errs = append(*errs, fmt.Errorf("line %d: templates.%s must be the template text or {file: PATH}", v.Line, name))
			return
		}
		tmpl, err := template.New(t.Source).Funcs(templateFuncs).Option("missingkey=error").Parse(text)
		if err != nil {
			*errs = append(*errs, t.wrap(err))
			return
		}
		t.tmpl = tmpl
		out[name] = t
	})
	return out
}

// inlineFirstLine is the line of an inline template's first line of text:
// a block scalar (| or >) starts on the line after its indicator.
func inlineFirstLine(v *yaml.Node) int {
	if v.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return v.Line + 1
	}
	return v.Line
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
