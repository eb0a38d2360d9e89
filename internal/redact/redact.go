// Package redact keeps secrets out of everything the hub prints: logs,
// status output, the audit file and errors sent to clients.
//
// A Redactor replaces known secret values wherever they appear, JSON
// escapes included. The credential heuristics (SecretName, LooksLikeKey,
// HasKeyPrefix) decide which values of a server entry are secrets; every
// layer that needs that decision (the upstream config, client config
// import) asks here, so there is one list of credential formats.
package redact

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/jsonrpc"
)

// Redacted replaces every secret in logs and error texts.
const Redacted = "[REDACTED]"

// Redactor replaces secret values in text. The hub has one, made from
// every secret of its config, and uses it on every path to a log, a
// status output or a client. Secrets learnt while the hub runs (OAuth
// tokens) are added with Add; it is safe for concurrent use.
type Redactor struct {
	mu      sync.Mutex // serialises Add
	secrets []string
	r       atomic.Pointer[replacer]
}

// replacer is one immutable generation of a Redactor's secrets.
type replacer struct {
	*strings.Replacer
	longest int
}

// New returns a Redactor for the given values. It replaces them longest
// first, so that a secret containing another is replaced whole.
func New(secrets ...[]string) *Redactor {
	r := &Redactor{}
	for _, list := range secrets {
		r.Add(list...)
	}
	return r
}

// Add redacts these values too, from now on.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(r.secrets)
	for _, s := range secrets {
		if s != "" && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	if len(r.secrets) == n {
		return
	}
	all := slices.Clone(r.secrets)
	slices.SortFunc(all, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(all))
	for _, s := range all {
		pairs = append(pairs, s, Redacted)
	}
	r.r.Store(&replacer{Replacer: strings.NewReplacer(pairs...), longest: len(all[0])})
}

// current is the current generation, nil while there is nothing to redact.
func (r *Redactor) current() *replacer {
	if r == nil {
		return nil
	}
	return r.r.Load()
}

// Longest is the length of the longest secret: text cut this close to its
// end may hold part of one, which String would not recognise.
func (r *Redactor) Longest() int {
	if rep := r.current(); rep != nil {
		return rep.longest
	}
	return 0
}

// String redacts s.
func (r *Redactor) String(s string) string {
	if rep := r.current(); rep != nil {
		return rep.Replace(s)
	}
	return s
}

// JSON redacts every string in a JSON value (keys included), so that a
// secret is found however the JSON escaped it. It returns data itself
// when there is nothing to redact.
func (r *Redactor) JSON(data json.RawMessage) json.RawMessage {
	if r.current() == nil || len(data) == 0 {
		return data
	}
	// Numbers stay json.Number, so that re-encoding keeps them digit for digit.
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return json.RawMessage(r.String(string(data)))
	}
	changed := false
	v = r.walk(v, &changed)
	if !changed {
		return data
	}
	out, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(r.String(string(data)))
	}
	return out
}

// Value redacts every string in a decoded JSON value (a log message's
// data, say), in place where it can.
func (r *Redactor) Value(v any) any {
	if r.current() == nil {
		return v
	}
	changed := false
	return r.walk(v, &changed)
}

func (r *Redactor) walk(v any, changed *bool) any {
	switch v := v.(type) {
	case string:
		red := r.String(v)
		*changed = *changed || red != v
		return red
	case []any:
		for i := range v {
			v[i] = r.walk(v[i], changed)
		}
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			rk := r.String(k)
			*changed = *changed || rk != k
			out[rk] = r.walk(x, changed)
		}
		return out
	}
	return v
}

// Error returns err with secrets removed from its text. It keeps err's
// chain for errors.Is and errors.As, but for a JSON-RPC error in it:
// errors.As finds a redacted copy of that one (message and data), since
// the hub passes JSON-RPC errors on to clients as they are. A bare
// *jsonrpc.Error comes back as its redacted copy.
func (r *Redactor) Error(err error) error {
	if err == nil || r.current() == nil {
		return err
	}
	var rpcCopy *jsonrpc.Error
	if rpc, ok := errors.AsType[*jsonrpc.Error](err); ok {
		msg, data := r.String(rpc.Message), r.JSON(rpc.Data)
		if msg != rpc.Message || string(data) != string(rpc.Data) {
			rpcCopy = &jsonrpc.Error{Code: rpc.Code, Message: msg, Data: data}
			if error(rpc) == err {
				return rpcCopy
			}
		}
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg && rpcCopy == nil {
		return err
	}
	return &redactedError{msg: red, err: err, rpc: rpcCopy}
}

type redactedError struct {
	msg string
	err error
	rpc *jsonrpc.Error // the redacted copy of the JSON-RPC error in err, if it had secrets
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// As gives the redacted copy of the chain's JSON-RPC error.
func (e *redactedError) As(target any) bool {
	if p, ok := target.(**jsonrpc.Error); ok && e.rpc != nil {
		*p = e.rpc
		return true
	}
	return false
}
