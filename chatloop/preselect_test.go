package chatloop

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

// TestRank: the ranking follows the vectors: most similar first, ties in
// catalog order.
func TestRank(t *testing.T) {
	tools := []rankedTool{
		{"far", []float32{0, 1, 0}},
		{"near", []float32{0.9, 0.1, 0}},
		{"exact", []float32{1, 0, 0}},
		{"opposite", []float32{-1, 0, 0}},
		{"tie-a", []float32{0, 0, 1}},
		{"tie-b", []float32{0, 0, 2}},
	}
	eqSlice(t, "ranking", rank([]float32{1, 0, 0}, tools), []string{"exact", "near", "far", "tie-a", "tie-b", "opposite"})
	eqSlice(t, "ranking toward the third axis", rank([]float32{0, 0, 1}, tools)[:2], []string{"tie-a", "tie-b"})
}

// TestPreselectorSelect: top_k by similarity plus the always-on tools,
// through both wire formats; the second turn embeds only the query (the
// tools' vectors are cached).
func TestPreselectorSelect(t *testing.T) {
	srv := fixture.StartEmbeddings(t, map[string]string{"forecast": "weather", "rain": "weather"})
	defs := []ToolDef{
		{Name: "clock__now", Description: "Get the current time."},
		{Name: "weather__get_forecast", Description: "Get the weather forecast for a city."},
		{Name: "math__add", Description: "Add two numbers."},
		{Name: "notes__search", Description: "Search notes."},
	}
	for _, ec := range []config.Embeddings{
		{Provider: config.EmbeddingsOllama, Model: "m", BaseURL: srv.URL},
		{Provider: config.EmbeddingsOpenAI, Model: "m", BaseURL: srv.URL + "/v1"},
	} {
		t.Run(ec.Provider, func(t *testing.T) {
			p, err := NewPreselector(ec, config.ChatPreselect{TopK: 1, Always: []string{"clock__now", "no__such_tool"}}, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Select(context.Background(), defs, "will it rain in Paris?")
			if err != nil {
				t.Fatal(err)
			}
			eqSlice(t, "selected", got, []string{"weather__get_forecast", "clock__now"})
			_, before := srv.Requests()
			if got, err = p.Select(context.Background(), defs, "add 2 and 3 numbers"); err != nil {
				t.Fatal(err)
			}
			eqSlice(t, "selected", got, []string{"math__add", "clock__now"})
			_, after := srv.Requests()
			eq(t, "texts embedded for the second turn", after-before, 1)
		})
	}
}

// TestPreselectorRealModel: through a real sentence-embedding model (both
// wire formats), each turn preselects the tool its message means, though
// no word of the message is in the tool.
func TestPreselectorRealModel(t *testing.T) {
	url := fixture.StartRealEmbeddings(t)
	var defs []ToolDef
	for server, tools := range fixture.EverydayTools() {
		for _, tool := range tools {
			defs = append(defs, ToolDef{Name: server + "__" + tool.Name, Description: tool.Description})
		}
	}
	for _, ec := range []config.Embeddings{
		{Provider: config.EmbeddingsOllama, Model: fixture.RealEmbeddingsModel, BaseURL: url},
		{Provider: config.EmbeddingsOpenAI, Model: fixture.RealEmbeddingsModel, BaseURL: url + "/v1"},
	} {
		t.Run(ec.Provider, func(t *testing.T) {
			ec.Timeout = config.Duration(30 * time.Second) // a loaded CI machine; the model answers in tens of ms
			p, err := NewPreselector(ec, config.ChatPreselect{TopK: 1}, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range fixture.MeaningRequests() {
				got, err := p.Select(t.Context(), defs, r.Query)
				if err != nil {
					t.Fatal(err)
				}
				eqSlice(t, r.Query, got, []string{r.Want})
			}
		})
	}
}

// catalogHub is a testHub that lists its whole catalog, as *hub.Hub does:
// its eager tools and the deferred weather tool search_tools loads.
type catalogHub struct{ *testHub }

func (c catalogHub) AllToolDefinitions() ([]json.RawMessage, error) {
	defs := []json.RawMessage{json.RawMessage(`{"name":"weather__get_forecast","description":"Get weather forecast for a location."}`)}
	for _, name := range initialTools {
		if name != "search_tools" {
			defs = append(defs, json.RawMessage(fmt.Sprintf(`{"name":%q,"description":"Tool %s."}`, name, name)))
		}
	}
	return defs, nil
}

// TestHandlerPreselect: POST /v1/chat preselects too: the first model call
// gets the deferred tool the message is about, loaded without a search
// round trip, the always-on tool and search_tools, and nothing else.
func TestHandlerPreselect(t *testing.T) {
	emb := fixture.StartEmbeddings(t, nil)
	h := catalogHub{newTestHub(t)}
	p := newScripted(t, config.ProviderAnthropic,
		reply("", call("c1", "weather__get_forecast", `{"location":"Paris"}`)),
		reply("Sunny."),
	)
	cfg := testConfig(p)
	var err error
	cfg.Preselector, err = NewPreselector(config.Embeddings{Provider: config.EmbeddingsOllama, Model: "m", BaseURL: emb.URL},
		config.ChatPreselect{TopK: 1, Always: []string{"clock__now"}}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(Handler(cfg, h, testLogger(t)))
	defer srv.Close()
	_, out := postChat(t, srv.URL, `{"model":"m","messages":[{"role":"user","content":"weather forecast for Paris"}]}`)
	eq(t, "answer", out.Answer, "Sunny.")
	eqSlice(t, "tools offered", p.toolsOffered(0), []string{"clock__now", "search_tools", "weather__get_forecast"})
	eq(t, "model calls", len(p.requests()), 2)
	eq(t, "preselected", out.Stats.Preselected, 2)
}
