package hub

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/mcp-hub/mcp-hub/internal/fixture"
)

func TestIDKey(t *testing.T) {
	tests := []struct {
		raw  string
		want string // "" for no id
	}{
		{`7`, "n7"},
		{`7.0`, "n7"},
		{`7e0`, "n7"},
		{`-1.5`, "n-1.5"},
		{`"a"`, "sa"},
		{`"\u0061"`, "sa"},
		{`"7"`, "s7"},
		{`null`, ""},
		{`{}`, ""},
		{``, ""},
	}
	for _, tc := range tests {
		got, ok := idKey(json.RawMessage(tc.raw))
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("idKey(%s) = %q, %v; want %q", tc.raw, got, ok, tc.want)
		}
	}
}

// TestStdioAnswersBeforeExit: when stdin ends with quick calls still
// running (`printf '...' | mcp-hub serve`), the hub answers them before the
// session ends. (TestE2EShutdownStdinClosed: a long call does not hold up
// the exit.)
func TestStdioAnswersBeforeExit(t *testing.T) {
	t.Parallel()
	h, _ := secHub(t, fixture.RestartingConfig(fixture.StdioEntry(t, "fx", "-features")))
	s := secServeStdio(t, h)
	s.send(fixture.RawInitialize)
	s.recv()
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fx__sleep","arguments":{"ms":300}}}`)
	s.send(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"fx__sleep","arguments":{"ms":200}}}`)
	s.in.Close()

	// Read everything the hub writes until it closes stdout.
	answers := make(chan map[string]string, 1)
	go func() {
		got := map[string]string{}
		for s.out.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Result struct {
					Content []struct{ Text string } `json:"content"`
				} `json:"result"`
			}
			if json.Unmarshal(s.out.Bytes(), &m) == nil && m.ID != nil && len(m.Result.Content) > 0 {
				got[string(m.ID)] = m.Result.Content[0].Text
			}
		}
		answers <- got
	}()
	// Without the wait the hub would have dropped 2 and "b".
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("ServeStdio: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("ServeStdio still running 20 s after stdin ended")
	}
	if got := <-answers; got[`2`] != "slept" || got[`"b"`] != "slept" {
		t.Errorf("answers after stdin ended: %v, want 2 and \"b\" slept", got)
	}
}

// TestOpenRequests: requests are open until answered in the SDK's encoding
// or cancelled by the client; notifications and answers to the server's
// own requests never open one.
func TestOpenRequests(t *testing.T) {
	var o openRequests
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a"}}`,
		`{"jsonrpc":"2.0","id":"x","method":"ping"}`,
		`{"jsonrpc":"2.0","id":3.0,"method":"tools/call","params":{"name":"b"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`,
		`[{"jsonrpc":"2.0","id":10,"method":"ping"}]`,
	} {
		o.read([]byte(line))
	}
	open := func() []string {
		var ids []string
		for id := range o.ids {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	if got := open(); !slices.Equal(got, []string{"n1", "n3", "sx"}) {
		t.Fatalf("open after reading = %v", got)
	}
	o.written([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}` + "\n"))
	o.written([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":"x"}}` + "\n"))
	o.written([]byte(`{"jsonrpc":"2.0","id":"x","error":{"code":-1,"message":"no"}}` + "\n"))
	if got := open(); !slices.Equal(got, []string{"n3"}) {
		t.Fatalf("open after two answers = %v", got)
	}
	o.read([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`))
	if got := open(); len(got) != 0 {
		t.Errorf("open after the cancellation = %v", got)
	}
	o.wait(context.Background(), time.Hour) // returns at once: nothing open
}
