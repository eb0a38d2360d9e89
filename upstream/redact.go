package upstream

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Redacted replaces every secret in logs and error texts.
const Redacted = "[REDACTED]"

// SecretValues returns the values in c that must never appear in a log
// line, an error returned to a client, or a status report:
//   - header values, and the credential after an auth scheme ("Bearer x");
//   - env values;
//   - args values after a flag that names a credential (--token X,
//     --api-key=X, ...), and args that look like keys (see LooksLikeKey);
//   - the URL's user info (with or without a password), its query values,
//     and path segments that look like keys.
//
// Values too short to be secrets, whose redaction would only mangle logs,
// are left out.
func (c *Config) SecretValues() []string {
	var out []string
	add := func(v string, min int) {
		v = strings.TrimSpace(v)
		if len(v) >= min && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, v := range c.Headers {
		add(v, 4)
		if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
			add(cred, 4)
		}
	}
	for k, v := range c.Env {
		if secretName(k) {
			add(v, 3)
		} else {
			add(v, 6)
		}
	}
	if c.OAuth != nil {
		add(c.OAuth.ClientSecret, 1)
	}
	for i, a := range c.Args {
		if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") && secretName(name) {
			add(v, 3)
		} else if strings.HasPrefix(a, "-") && secretName(a) && i+1 < len(c.Args) {
			add(c.Args[i+1], 3)
		}
		if v := a[strings.Index(a, "=")+1:]; LooksLikeKey(v) {
			add(v, 8)
		}
	}
	if u, err := url.Parse(c.URL); err == nil {
		if u.User != nil {
			// The user info as it appears in the URL, whatever its length,
			// and its parts where they are long enough to be recognised.
			add(u.User.String()+"@", 2)
			p, hasPassword := u.User.Password()
			add(p, 3)
			if !hasPassword {
				add(u.User.Username(), 4)
			}
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v, 4)
				add(url.QueryEscape(v), 4)
			}
		}
		for _, seg := range strings.Split(u.Path, "/") {
			if LooksLikeKey(seg) {
				add(seg, 8)
			}
		}
	}
	return out
}

func secretName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASS", "AUTH", "CREDENTIAL", "COOKIE", "SESSION"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// keyPrefixes start well-known credential formats: OpenAI and Anthropic,
// Stripe, GitHub, Slack, GitLab, Hugging Face, npm, PyPI, Google, AWS.
var keyPrefixes = []string{"sk-", "sk_", "rk_", "pk_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xapp-", "glpat-", "hf_", "npm_", "pypi-", "AIza", "AKIA", "ASIA"}

// LooksLikeKey reports whether s looks like a credential: a well-known key
// format (sk-..., ghp_..., xoxb-..., ...), a JWT, or a long token of
// letters and digits with a high entropy. Paths, URLs and words do not.
func LooksLikeKey(s string) bool {
	if len(s) < 8 || strings.ContainsAny(s, " /\\:@") {
		return false
	}
	for _, p := range keyPrefixes {
		if strings.HasPrefix(s, p) && len(s) >= len(p)+8 {
			return true
		}
	}
	if parts := strings.Split(s, "."); len(parts) == 3 && strings.HasPrefix(s, "eyJ") && len(parts[1]) > 0 && len(parts[2]) > 0 {
		return true // a JWT
	}
	if len(s) < 24 {
		return false
	}
	var letters, digits int
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters++
		case r == '-' || r == '_' || r == '.' || r == '+' || r == '=':
		default:
			return false
		}
	}
	return letters > 0 && digits > 0 && entropy(s) >= 3.5
}

// entropy is the Shannon entropy of s, in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	for _, n := range counts {
		if n > 0 {
			p := float64(n) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}

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

// NewRedactor redacts the given values, longest first so that a secret
// containing another is replaced whole.
func NewRedactor(secrets ...[]string) *Redactor {
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
