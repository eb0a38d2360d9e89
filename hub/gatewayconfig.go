package hub

import (
	"fmt"
	"net/url"
	"strings"
)

// validateGateway checks the team-deployment sections: auth, audit and
// telemetry.
func (c *Config) validateGateway(line func(keys ...string) int) []error {
	var errs []error
	bad := func(msg string, keys ...string) {
		errs = append(errs, &ConfigError{Path: c.Path, Line: line(keys...), Msg: msg})
	}
	names := map[string]bool{}
	for i, t := range c.Auth.Tokens {
		if strings.TrimSpace(t.Value) == "" {
			// Fail closed: an empty token must not read as "fewer tokens",
			// or as no auth at all.
			bad(fmt.Sprintf("auth.tokens[%d]: the token is empty (give every entry a token, or remove it)", i), "auth", "tokens")
		}
		if t.Name == "" {
			continue
		}
		if names[t.Name] {
			bad(fmt.Sprintf("auth.tokens: the name '%s' is given twice; token names must be unique", t.Name), "auth", "tokens")
		}
		names[t.Name] = true
	}
	if o := c.Auth.OAuth; o != nil {
		if err := o.validate(); err != nil {
			bad(err.Error(), "auth", "oauth")
		}
	}
	if rl := c.Auth.RateLimit; rl != nil {
		if rl.RequestsPerSecond < 0 || rl.Burst < 0 {
			bad("auth.rate_limit: requests_per_second and burst must not be negative", "auth", "rate_limit")
		}
		for name, r := range rl.Principals {
			if r.RequestsPerSecond < 0 || r.Burst < 0 {
				bad(fmt.Sprintf("auth.rate_limit.principals.%s: requests_per_second and burst must not be negative", name), "auth", "rate_limit", "principals", name)
			}
		}
	}
	if c.Audit.MaxSizeMB < 0 || c.Audit.MaxBackups < 0 {
		bad("audit: max_size_mb and max_backups must not be negative", "audit")
	}
	if (c.Audit.MaxSizeMB != 0 || c.Audit.MaxBackups != 0 || c.Audit.IncludeArguments) && c.Audit.File == "" {
		bad("audit: set 'file' (the audit log's path); the other audit keys do nothing without it", "audit")
	}
	if e := c.Telemetry.OTLPEndpoint; e != "" {
		if u, err := url.Parse(e); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(fmt.Sprintf("telemetry.otlp_endpoint: %q is not an http(s) URL (the OTLP/HTTP receiver, e.g. http://127.0.0.1:4318)", e), "telemetry", "otlp_endpoint")
		}
	}
	return errs
}

// Configured reports whether the section asks for credentials: static
// tokens or OAuth.
func (a Auth) Configured() bool { return len(a.Tokens) > 0 || a.OAuth != nil }
