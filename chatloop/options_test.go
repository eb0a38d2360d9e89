package chatloop

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

// TestImages: a tool's image reaches Anthropic inside the tool_result and
// OpenAI in a user message after the tool messages; Ollama, whose models
// mostly cannot take images, gets a one-line summary.
func TestImages(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString(pngBytes)
	cases := []struct {
		kind  string
		check func(t *testing.T, p *scripted)
	}{
		{config.ProviderAnthropic, func(t *testing.T, p *scripted) {
			eqResults(t, "results", p.toolResults(1), []sentResult{{CallID: "c1", Text: "chart:<image>"}})
			if !strings.Contains(string(p.raw[1]), `"source":{"data":"`+b64+`","media_type":"image/png","type":"base64"}`) {
				t.Errorf("request lacks the base64 image: %s", p.raw[1])
			}
		}},
		{config.ProviderOpenAI, func(t *testing.T, p *scripted) {
			eqResults(t, "results", p.toolResults(1), []sentResult{{CallID: "c1", Text: "chart:\n(images follow in the next message)"}})
			msgs := p.requests()[1]["messages"].([]any)
			last := msgs[len(msgs)-1].(map[string]any)
			if last["role"] != "user" || !strings.Contains(string(p.raw[1]), `"image_url":{"url":"data:image/png;base64,`+b64+`"}`) {
				t.Errorf("no image user message: %s", p.raw[1])
			}
		}},
		{config.ProviderOllama, func(t *testing.T, p *scripted) {
			eqResults(t, "results", p.toolResults(1), []sentResult{{CallID: "c1", Text: "chart:\n[image image/png, 18 bytes: not shown, this model does not accept images]"}})
			if strings.Contains(string(p.raw[1]), "image_url") {
				t.Errorf("ollama got an image: %s", p.raw[1])
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.kind, func(t *testing.T) {
			t.Parallel()
			wire := tc.kind
			if wire == config.ProviderOllama {
				wire = config.ProviderOpenAI
			}
			h := newTestHub(t)
			p := newScripted(t, wire, reply("", call("c1", "img__chart", `{}`)), reply("a chart"))
			r := runTurn(t, h, p, false, func(c *Config) {
				pc := c.Providers["local"]
				pc.Type = tc.kind
				c.Providers["local"] = pc
			}, "draw")
			if r.err != nil {
				t.Fatal(r.err)
			}
			tc.check(t, p)
		})
	}
}

// TestRequestOptions: the system prompt precedence, model settings and
// parallel_tool_calls off reach the wire.
func TestRequestOptions(t *testing.T) {
	cases := []struct {
		name       string
		flag       string // --system
		model      string // models.m.system
		wantSystem string
	}{
		{"flag wins", "from flag", "from model", "from flag"},
		{"model system", "", "from model", "from model"},
		{"default explains search_tools", "", "", DefaultSystemPrompt},
	}
	for _, kind := range []string{config.ProviderOpenAI, config.ProviderAnthropic} {
		for _, tc := range cases {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				h := newTestHub(t)
				p := newScripted(t, kind, reply("ok"))
				cfg := testConfig(p)
				cfg.Models["m"] = config.Model{Provider: "local", Model: "test-model", System: tc.model, Temperature: ptr(0.3), MaxTokens: 321}
				cfg.Chat.ParallelToolCalls = ptr(false)
				chat, err := cfg.NewChat(h.dial(t), ChatOptions{System: tc.flag})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := chat.Send(t.Context(), "hi"); err != nil {
					t.Fatal(err)
				}
				req := p.requests()[0]
				var system string
				if kind == config.ProviderAnthropic {
					system = req["system"].([]any)[0].(map[string]any)["text"].(string)
					eq(t, "max_tokens", req["max_tokens"], any(321.0))
					eq(t, "disable_parallel_tool_use", req["tool_choice"].(map[string]any)["disable_parallel_tool_use"], any(true))
				} else {
					first := req["messages"].([]any)[0].(map[string]any)
					eq(t, "system role", first["role"], any("system"))
					system = first["content"].(string)
					eq(t, "max_tokens", req["max_tokens"], any(321.0))
					eq(t, "parallel_tool_calls", req["parallel_tool_calls"], any(false))
				}
				eq(t, "system", system, tc.wantSystem)
				eq(t, "temperature", req["temperature"], any(0.3))
				eq(t, "model", req["model"], any("test-model"))
			})
		}
	}
	if !strings.Contains(DefaultSystemPrompt, "search_tools") || !strings.Contains(DefaultSystemPrompt, "call_tool") {
		t.Error("the default system prompt must explain search_tools and call_tool")
	}
}
