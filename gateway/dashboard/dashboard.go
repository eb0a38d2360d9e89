package dashboard

import (
	"bytes"
	"embed"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/version"
	"github.com/mcp-hub/mcp-hub/pin"
)

//go:embed templates/*.html
var files embed.FS

// parseTemplates parses the pages; a dashboard does it on its first
// request, not at start-up (1,000 allocations that a hub nobody browses
// never needs).
func parseTemplates() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"ms": func(v float64) string {
			if v <= 0 {
				return "-"
			}
			return (time.Duration(v * float64(time.Millisecond))).Round(time.Millisecond / 10).String()
		},
		"ago": func(t time.Time) string { return time.Since(t).Round(time.Second).String() },
		"sum": func(m map[string]int) int {
			n := 0
			for _, v := range m {
				n += v
			}
			return n
		},
	}).ParseFS(files, "templates/*.html"))
}

// New returns the dashboard's handler for gateway.UIPath and everything under it.
func New(g *gateway.Gateway) http.Handler {
	d := &dashboard{g: g, hub: g.Hub(), templates: sync.OnceValue(parseTemplates)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+gateway.UIPath, d.page)
	mux.HandleFunc("GET "+gateway.UIPath+"/{$}", d.page)
	mux.HandleFunc("GET "+gateway.UIPath+"/login", d.loginForm)
	mux.HandleFunc("POST "+gateway.UIPath+"/login", d.login)
	mux.HandleFunc("POST "+gateway.UIPath+"/logout", d.logout)
	return securityHeaders(mux)
}

type dashboard struct {
	g         *gateway.Gateway
	hub       *hub.Hub
	templates func() *template.Template // parsed once, read-only after
}

// securityHeaders keep the page from being framed or loading anything
// from elsewhere.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
		w.Header().Set("X-Frame-Options", "DENY")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// pageData is what the page template shows.
type pageData struct {
	Version   string
	Principal *hub.Principal
	AuthOn    bool
	Health    gateway.Health
	Servers   []serverRow
	Sessions  []hub.SessionInfo
	Toolset   string
	Discovery bool
	Query     string
	Server    string
	Searched  bool
	Result    string
	IsError   bool
	Total     int
	// Held are the tools held back by their pins: state and reason,
	// never their new text.
	Held []heldRow
}

type heldRow struct {
	Name, Server, Original, State, Reason string
}

type serverRow struct {
	gateway.ServerInfo
	Eager, Deferred int
	Tools           []toolRow
}

type toolRow struct {
	Name, Original, Description string
	Deferred                    bool
}

func (d *dashboard) page(w http.ResponseWriter, r *http.Request) {
	p := hub.PrincipalFrom(r.Context())
	if p == nil && !d.g.AuthRequired() {
		p = &hub.Principal{Name: "anonymous", Kind: hub.PrincipalAnonymous}
	}
	if p == nil {
		http.Redirect(w, r, gateway.UIPath+"/login", http.StatusSeeOther)
		return
	}
	toolset, err := d.hub.ToolsetOf(p)
	if err != nil {
		http.Error(w, "Forbidden: "+err.Error(), http.StatusForbidden)
		return
	}
	tools, err := d.hub.ToolsIn(toolset)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	data := pageData{
		Version: version.Version, Principal: p, AuthOn: d.g.AuthRequired(), Health: d.g.Health(),
		Sessions: d.hub.Sessions(p), Toolset: toolset, Discovery: d.hub.Config().Discovery.Enabled,
		Query: r.URL.Query().Get("q"), Server: r.URL.Query().Get("server"), Total: len(tools),
	}
	byServer := map[string]*serverRow{}
	for _, s := range data.Health.Servers {
		data.Servers = append(data.Servers, serverRow{ServerInfo: s})
	}
	for i := range data.Servers {
		byServer[data.Servers[i].Name] = &data.Servers[i]
	}
	for _, t := range tools {
		row := byServer[t.Server]
		if row == nil {
			continue
		}
		row.Tools = append(row.Tools, toolRow{Name: t.Name, Original: t.Original, Description: pin.Escape(firstLine(t.Def.Description)), Deferred: t.Deferred})
		if t.Deferred {
			row.Deferred++
		} else {
			row.Eager++
		}
	}
	for _, q := range d.hub.Catalog().Quarantine {
		if row := byServer[q.Server]; row == nil || (p.Restricted && len(row.Tools) == 0) {
			continue
		}
		data.Held = append(data.Held, heldRow{Name: q.Name, Server: q.Server, Original: pin.Escape(q.Original), State: string(q.State), Reason: pin.Escape(q.Reason)})
	}
	if p.Restricted {
		// Servers the toolset shows nothing of are not this principal's business.
		data.Servers = slices.DeleteFunc(data.Servers, func(s serverRow) bool { return len(s.Tools) == 0 })
	}
	if data.Discovery && (strings.TrimSpace(data.Query) != "" || data.Server != "") {
		data.Searched = true
		// "a; b" are the steps of one task, as search_tools' queries.
		res, err := d.hub.Search(hub.WithPrincipal(r.Context(), p), toolset, strings.Split(data.Query, ";"), data.Server)
		if err != nil {
			data.Result, data.IsError = "Error: "+err.Error(), true
		} else {
			data.Result, data.IsError = hub.ResultText(res), res.IsError
		}
	}
	d.render(w, http.StatusOK, "page.html", data)
}

type loginData struct{ Error string }

func (d *dashboard) loginForm(w http.ResponseWriter, r *http.Request) {
	if !d.g.AuthRequired() {
		http.Redirect(w, r, gateway.UIPath, http.StatusSeeOther)
		return
	}
	d.render(w, http.StatusOK, "login.html", loginData{})
}

// login checks the submitted token and, if it is good, keeps it in the cookie.
func (d *dashboard) login(w http.ResponseWriter, r *http.Request) {
	if !fromOwnPage(r) {
		http.Error(w, "Forbidden: the login form must be posted from this hub's own page", http.StatusForbidden)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	token := strings.TrimSpace(r.PostFormValue("token"))
	if _, err := d.g.VerifyToken(r, token); err != nil {
		if d.g.RefuseTooManyFailures(w, r, err) {
			return
		}
		d.render(w, http.StatusUnauthorized, "login.html", loginData{Error: "That token was not accepted: " + err.Error()})
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: gateway.UICookie, Value: token, Path: gateway.UIPath,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r),
	})
	http.Redirect(w, r, gateway.UIPath, http.StatusSeeOther)
}

func (d *dashboard) logout(w http.ResponseWriter, r *http.Request) {
	if !fromOwnPage(r) {
		http.Error(w, "Forbidden: log out from this hub's own page", http.StatusForbidden)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: gateway.UICookie, Value: "", Path: gateway.UIPath, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: overTLS(r),
	})
	http.Redirect(w, r, gateway.UIPath+"/login", http.StatusSeeOther)
}

// fromOwnPage is the CSRF check of the form posts: a browser says where a
// request comes from (Origin, Sec-Fetch-Site), and it must be this hub.
// Non-browser clients send neither and are not a CSRF vector.
func fromOwnPage(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host && (u.Scheme == "http" || u.Scheme == "https")
}

func overTLS(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// render executes a template into a buffer first, so that a failure is a
// clean 500 rather than half a page.
func (d *dashboard) render(w http.ResponseWriter, status int, name string, data any) {
	var buf bytes.Buffer
	if err := d.templates().ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "dashboard: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 160 {
		s = string(r[:157]) + "..."
	}
	return s
}
