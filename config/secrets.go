package config

import (
	"net/url"
	"slices"
	"strings"

	"github.com/mcp-hub/mcp-hub/internal/redact"
)

// SecretValues returns the values in c that must never appear in a log
// line, an error returned to a client, or a status report:
//   - header values, and the credential after an auth scheme ("Bearer x");
//   - env values;
//   - args values after a flag that names a credential (--token X,
//     --api-key=X, ...), and args that look like keys (see redact.LooksLikeKey);
//   - the URL's user info (with or without a password), its query values,
//     and path segments that look like keys.
//
// Values too short to be secrets, whose redaction would only mangle logs,
// are left out.
func (c *Upstream) SecretValues() []string {
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
		if redact.SecretName(k) {
			add(v, 3)
		} else {
			add(v, 6)
		}
	}
	if c.OAuth != nil {
		add(c.OAuth.ClientSecret, 1)
	}
	for i, a := range c.Args {
		if name, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(name, "-") && redact.SecretName(name) {
			add(v, 3)
		} else if strings.HasPrefix(a, "-") && redact.SecretName(a) && i+1 < len(c.Args) {
			add(c.Args[i+1], 3)
		}
		if v := a[strings.Index(a, "=")+1:]; redact.LooksLikeKey(v) {
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
			if redact.LooksLikeKey(seg) {
				add(seg, 8)
			}
		}
	}
	return out
}
