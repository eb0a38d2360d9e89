package chatloop

import (
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

// TestFromConfig: the chat takes the sections package config decoded and
// parses the templates; a syntax error names the template's file (or
// hub.yaml) and line.
func TestFromConfig(t *testing.T) {
	cc, err := FromConfig(&config.Config{
		Providers: map[string]config.Provider{"p": {Type: config.ProviderOllama, BaseURL: config.OllamaChatBaseURL}},
		Models:    map[string]config.Model{"m": {Provider: "p", Model: "m", Template: "t"}},
		Chat:      config.Chat{MaxRounds: 3},
		Templates: map[string]config.Template{"t": {Text: "{{len .Tools}} tools", Source: "ok.tmpl", FirstLine: 1}},
	})
	if err != nil {
		t.Fatal(err)
	}
	eq(t, "max_rounds", cc.Chat.MaxRounds, 3)
	if got, err := cc.Templates["t"].Render(TemplateData{Tools: make([]TemplateTool, 2)}); err != nil || got != "2 tools" {
		t.Errorf("render = %q, %v", got, err)
	}

	for _, tc := range []struct {
		tmpl config.Template
		want string
	}{
		{config.Template{Text: "line one\n{{range .Tools}}\n{{.Name}\n", Source: "t.tmpl", FirstLine: 1}, "t.tmpl:3: templates.t: "},
		{config.Template{Text: "fine\n{{if}}\n", Source: "hub.yaml", FirstLine: 7}, "hub.yaml:8: templates.t: "},
	} {
		_, err := FromConfig(&config.Config{Templates: map[string]config.Template{"t": tc.tmpl}})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.tmpl.Text, err, tc.want)
		}
	}
}
