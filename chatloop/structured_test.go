package chatloop

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcp-hub/mcp-hub/config"
)

// TestHandlerResponseSchema: POST /v1/chat with response_schema answers
// with a JSON object valid against it (after one repair round), 422 when
// the model stays wrong, 400 for a schema that is not one of an object.
func TestHandlerResponseSchema(t *testing.T) {
	const schema = `{"type":"object","properties":{"sum":{"type":"number"}},"required":["sum"]}`
	body := `{"model":"m","messages":[{"role":"user","content":"2+3?"}],"response_schema":` + schema + `}`
	cases := []struct {
		name   string
		kind   string
		steps  []step
		status int
		answer string
	}{
		{"openai repaired", config.ProviderOpenAI, []step{reply(`{"total":5}`), reply(`{"sum":5}`)}, 200, `{"sum":5}`},
		{"anthropic formatter", config.ProviderAnthropic, []step{reply("It is 5."), reply("", call("f1", "final_answer", `{"sum":5}`))}, 200, `{"sum":5}`},
		{"openai stubborn", config.ProviderOpenAI, []step{reply(`{"total":5}`), reply(`five`)}, 422, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := newScripted(t, tc.kind, tc.steps...)
			srv := httptest.NewServer(Handler(testConfig(p), newTestHub(t), testLogger(t)))
			defer srv.Close()
			resp, err := http.Post(srv.URL, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var out struct {
				ChatResponse
				Error string
			}
			json.NewDecoder(resp.Body).Decode(&out)
			eq(t, "status", resp.StatusCode, tc.status)
			eq(t, "answer", out.Answer, tc.answer)
			if tc.status == 422 && !strings.Contains(out.Error, "does not match the response schema") {
				t.Errorf("error = %q", out.Error)
			}
			if tc.kind == config.ProviderOpenAI {
				rf, _ := json.Marshal(p.requests()[0]["response_format"])
				if !strings.Contains(string(rf), `"json_schema"`) {
					t.Errorf("response_format = %s", rf)
				}
			} else {
				tcj, _ := json.Marshal(p.requests()[1]["tool_choice"])
				eq(t, "tool_choice", string(tcj), `{"name":"final_answer","type":"tool"}`)
			}
		})
	}
	p := newScripted(t, config.ProviderOpenAI)
	srv := httptest.NewServer(Handler(testConfig(p), newTestHub(t), testLogger(t)))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"x"}],"response_schema":{"type":"string"}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	eq(t, "bad schema status", resp.StatusCode, 400)
}
