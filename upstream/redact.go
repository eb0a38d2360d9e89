package upstream

import (
	"cmp"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Redacted replaces every secret in logs and error texts.
const Redacted = "[REDACTED]"

// SecretValues returns the values in c that must never appear in a log
// line, an error returned to a client, or a status report: header values
// (and the credential after an auth scheme such as "Bearer"), env values,
// and the password and query values of the URL. Values too short to be
// secrets, whose redaction would only mangle logs, are left out.
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
	if u, err := url.Parse(c.URL); err == nil {
		if p, ok := u.User.Password(); ok {
			add(p, 1)
			add(u.User.String(), 4)
		}
		for _, vs := range u.Query() {
			for _, v := range vs {
				add(v, 4)
				add(url.QueryEscape(v), 4)
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

// Redactor replaces secret values in text. Secrets learnt while the hub
// runs (OAuth tokens) are added with Add; it is safe for concurrent use.
type Redactor struct {
	mu      sync.Mutex // serialises Add
	secrets []string
	r       atomic.Pointer[strings.Replacer]
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
	r.r.Store(strings.NewReplacer(pairs...))
}

// String redacts s.
func (r *Redactor) String(s string) string {
	if r == nil {
		return s
	}
	if rep := r.r.Load(); rep != nil {
		return rep.Replace(s)
	}
	return s
}

// Error returns err with secrets removed from its text. It keeps err's
// chain for errors.Is and errors.As; only the message changes.
func (r *Redactor) Error(err error) error {
	if err == nil || r == nil || r.r.Load() == nil {
		return err
	}
	msg := err.Error()
	if red := r.String(msg); red != msg {
		return &redactedError{msg: red, err: err}
	}
	return err
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }
