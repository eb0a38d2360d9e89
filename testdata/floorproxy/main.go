// Command floorproxy is the least an MCP proxy from streamable HTTP to a
// stdio server can do, for the proxy benchmark (e2e/proxybench_test.go): it
// measures what the second hop itself costs on a machine, so that the hub's
// figures can be read against it.
//
//	floorproxy [-json] -http 127.0.0.1:8080 -- server [args...]
//
// It starts the server once, shares it between every client session, and
// for each POST of one JSON-RPC message at /mcp:
//   - a request goes to the server under an ID of its own, and the server's
//     answer comes back under the client's ID, as one server-sent event
//     with a Content-Length, framed and headed as the hub answers (with
//     -json, as an application/json body instead, as TBXark/mcp-proxy
//     answers);
//   - the first initialize is forwarded (and notifications/initialized sent
//     after it); later ones get the same result, with a new session ID;
//   - a notification is accepted and dropped.
//
// GET answers 405 (no stream for the server's own messages), DELETE 204.
// Nothing is checked beyond that the session ID is one it gave: no names, no
// limits, no metrics, no timeouts. It is a measuring stick, not a proxy to
// run.
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"sync"
)

func main() {
	addr := flag.String("http", "127.0.0.1:0", "address to listen on")
	asJSON := flag.Bool("json", false, "answer as application/json, not as an event stream")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: floorproxy -http ADDR -- server [args...]")
	}
	cmd := exec.Command(flag.Arg(0), flag.Args()[1:]...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		log.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	p := &proxy{server: stdin, json: *asJSON, pending: map[int64]chan []byte{}, sessions: map[string]bool{}}
	go p.read(stdout)
	http.Handle("/mcp", p)
	log.Fatal(http.ListenAndServe(*addr, nil))
}

type proxy struct {
	json bool // answer as application/json

	writeMu sync.Mutex
	server  io.Writer

	mu       sync.Mutex
	next     int64
	pending  map[int64]chan []byte // by the server-side ID
	sessions map[string]bool
	initOnce sync.Once
	initErr  error
	init     json.RawMessage // the server's initialize result
}

// message is what the proxy reads of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

// read hands each line the server writes to the request waiting for it.
func (p *proxy) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			log.Fatalf("server output: %v", err)
		}
		var m message
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			continue // the server's own request or notification
		}
		p.mu.Lock()
		ch := p.pending[id]
		delete(p.pending, id)
		p.mu.Unlock()
		if ch != nil {
			ch <- line
		}
	}
}

// call sends a request to the server and returns its answer.
func (p *proxy) call(method string, params json.RawMessage) (message, error) {
	ch := make(chan []byte, 1)
	p.mu.Lock()
	p.next++
	id := p.next
	p.pending[id] = ch
	p.mu.Unlock()
	line := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":%q`, id, method)
	if len(params) > 0 {
		line = append(append(line, `,"params":`...), params...)
	}
	if err := p.send(append(line, "}\n"...)); err != nil {
		return message{}, err
	}
	var m message
	err := json.Unmarshal(<-ch, &m)
	return m, err
}

func (p *proxy) send(line []byte) error {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	_, err := p.server.Write(line)
	return err
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodPost:
	case http.MethodDelete:
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	in, err := io.ReadAll(r.Body)
	var m message
	if err != nil || json.Unmarshal(in, &m) != nil || m.Method == "" {
		http.Error(w, "one JSON-RPC message expected", http.StatusBadRequest)
		return
	}
	if m.Method != "initialize" {
		p.mu.Lock()
		ok := p.sessions[r.Header.Get("Mcp-Session-Id")]
		p.mu.Unlock()
		if !ok {
			http.Error(w, "unknown session", http.StatusNotFound)
			return
		}
	}
	if len(m.ID) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var answer message
	switch m.Method {
	case "initialize":
		p.initOnce.Do(func() {
			var a message
			if a, p.initErr = p.call(m.Method, m.Params); p.initErr == nil {
				p.init = a.Result
				p.initErr = p.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n"))
			}
		})
		if p.initErr != nil {
			http.Error(w, p.initErr.Error(), http.StatusBadGateway)
			return
		}
		answer.Result = p.init
		sid := rand.Text()
		p.mu.Lock()
		p.sessions[sid] = true
		p.mu.Unlock()
		w.Header().Set("Mcp-Session-Id", sid)
	case "server/discover": // the 2026-07-28 probe: this proxy speaks 2025-11-25
		answer.Error = json.RawMessage(`{"code":-32601,"message":"method not found"}`)
	default:
		if answer, err = p.call(m.Method, m.Params); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
	}
	var body bytes.Buffer
	if !p.json {
		body.WriteString("event: message\ndata: ")
	}
	body.WriteString(`{"jsonrpc":"2.0","id":`)
	body.Write(m.ID)
	if answer.Error != nil {
		body.WriteString(`,"error":`)
		body.Write(answer.Error)
	} else {
		body.WriteString(`,"result":`)
		body.Write(answer.Result)
	}
	body.WriteString("}")
	h := w.Header()
	if p.json {
		h.Set("Content-Type", "application/json")
	} else {
		body.WriteString("\n\n")
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache, no-transform")
	}
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	w.Write(body.Bytes())
}
