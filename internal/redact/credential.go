package redact

import (
	"math"
	"strings"
)

// secretWords name a credential in a flag, an env variable or a header:
// --api-key, GITHUB_TOKEN, --password=..., X-Auth-Session.
var secretWords = []string{"key", "token", "secret", "pass", "auth", "credential", "cookie", "session", "bearer"}

// SecretName reports whether name (a flag, an env variable, a header)
// names a credential, so that its value is one.
func SecretName(name string) bool {
	n := strings.ToLower(name)
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// keyPrefixes start well-known credential formats: OpenAI and Anthropic,
// Stripe (sk_ covers sk_live_ and sk_test_), GitHub, Slack, GitLab,
// Hugging Face, npm, PyPI, Google (API keys and OAuth tokens), AWS,
// Airtable, Notion, Linear, Perplexity, Tavily.
var keyPrefixes = []string{"sk-", "sk_", "rk_", "pk_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "xapp-", "glpat-", "hf_", "npm_", "pypi-", "AIza", "ya29.", "AKIA", "ASIA",
	"pat-", "ntn_", "secret_", "lin_api_", "pplx-", "tvly-"}

// HasKeyPrefix reports whether s starts with a well-known credential
// prefix (sk-, ghp_, xoxb-, ...) followed by at least 8 more bytes: a
// bare prefix, or a word that merely starts like one, is not a key.
func HasKeyPrefix(s string) bool {
	for _, p := range keyPrefixes {
		if strings.HasPrefix(s, p) && len(s) >= len(p)+8 {
			return true
		}
	}
	return false
}

// LooksLikeKey reports whether s looks like a credential: a well-known key
// format (see HasKeyPrefix), a JWT, or a long token of letters and digits
// with a high entropy. Paths, URLs and words do not.
func LooksLikeKey(s string) bool {
	if len(s) < 8 || strings.ContainsAny(s, " /\\:@") {
		return false
	}
	if HasKeyPrefix(s) {
		return true
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
