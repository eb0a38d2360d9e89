package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/internal/clean"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func loginCommand() *cli.Command {
	return &cli.Command{
		Name:      "login",
		Usage:     "authorize the hub at an OAuth-protected remote server (browser flow) and store the token",
		ArgsUsage: "NAME",
		Description: `Runs the OAuth authorization code flow (PKCE) for server NAME: it listens on
127.0.0.1 for the redirect at /callback, opens the authorization page with
$BROWSER (a command that gets the URL as its only argument), else the platform's
opener, else prints the URL, waits for the redirect, exchanges the code and
stores the token (and the client registration) under $MCP_HUB_STATE_DIR
(default <user config dir>/mcp-hub/tokens). A running 'mcp-hub serve' picks
the login up within seconds.`,
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: "how long to wait for the browser's redirect"},
		},
		Action: func(c *cli.Context) error {
			sc, log, red, err := oauthServer(c, "login")
			if err != nil {
				return err
			}
			oauth, err := oauthOptions(c, true)
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			oauth.Timeout = c.Duration("timeout")
			res, err := upstream.Login(c.Context, sc.Upstream, upstream.Options{
				Logger: log, OAuth: oauth, Redactor: red,
			})
			w := c.App.Writer
			if res != nil && res.Authorized {
				fmt.Fprintf(w, "Logged in to '%s' (%s).\n", sc.Name, sc.URL)
				printGrant(c, res)
			}
			switch {
			case err != nil && res != nil && res.Authorized:
				var nl *upstream.NeedsLoginError
				if errors.As(err, &nl) {
					msg := "the token is stored, but the server still refuses it: " + nl.Reason
					if len(nl.Scopes) > 0 {
						msg += fmt.Sprintf(" (it asks for scope %q)", strings.Join(nl.Scopes, " "))
					}
					return cli.Exit(clean.Line(msg, maxTerminalLine), 1)
				}
				return cli.Exit(clean.Line(fmt.Sprintf("the token is stored, but the server then failed: %v", err), maxTerminalLine), 1)
			case err != nil:
				return cli.Exit(loginFailure(sc.Name, err), 1)
			case !res.Authorized:
				fmt.Fprintf(w, "Server '%s' did not ask for authorization (%d tools listed without a token): nothing to store.\n", sc.Name, res.Tools)
			}
			return nil
		},
	}
}

// printGrant says what the login got, never the token itself.
func printGrant(c *cli.Context, res *upstream.LoginResult) {
	w := c.App.Writer
	scopes := clean.Line(strings.Join(res.Scopes, " "), maxTerminalLine)
	if scopes == "" {
		scopes = "(none named)"
	}
	fmt.Fprintf(w, "  scopes:        %s\n", scopes)
	if res.Expiry.IsZero() {
		fmt.Fprintf(w, "  access token:  no expiry given\n")
	} else {
		fmt.Fprintf(w, "  access token:  expires %s (in %s)\n", res.Expiry.Local().Format(time.RFC3339), time.Until(res.Expiry).Round(time.Second))
	}
	refresh := "no (log in again when it expires)"
	if res.Refreshable {
		refresh = "yes (renewed automatically)"
	}
	fmt.Fprintf(w, "  refresh token: %s\n", refresh)
	if res.ClientID != "" {
		fmt.Fprintf(w, "  client:        %s (%s)\n", clean.Line(res.ClientID, maxTerminalLine), res.Registration)
	}
	fmt.Fprintf(w, "  tools:         %d\n", res.Tools)
}

// loginFailure turns the flow's errors into one clear line. They carry
// text from authorization servers (error descriptions, response bodies),
// so the line is bounded and without control characters.
func loginFailure(server string, err error) string {
	var denied *upstream.AuthorizationDeniedError
	switch {
	case errors.As(err, &denied):
		return clean.Line(fmt.Sprintf("login to '%s' failed: %v", server, denied), maxTerminalLine)
	case errors.Is(err, context.Canceled):
		return fmt.Sprintf("login to '%s' cancelled", server)
	}
	return clean.Line(fmt.Sprintf("login to '%s' failed: %v", server, err), maxTerminalLine)
}

// maxTerminalLine bounds a line of login output built from network text.
const maxTerminalLine = 1000

func logoutCommand() *cli.Command {
	return &cli.Command{
		Name:      "logout",
		Usage:     "forget the stored OAuth token and client registration of a server",
		ArgsUsage: "NAME",
		Action: func(c *cli.Context) error {
			sc, _, _, err := oauthServer(c, "logout")
			if err != nil {
				return err
			}
			oauth, err := oauthOptions(c, false)
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			ok, err := oauth.Store.Delete(c.Context, sc.Name, sc.URL)
			if err != nil {
				return cli.Exit(err.Error(), 1)
			}
			if ok {
				fmt.Fprintf(c.App.Writer, "Logged out of '%s': its token and client registration are forgotten (revoke the grant at the provider to end it there too).\n", sc.Name)
			} else {
				fmt.Fprintf(c.App.Writer, "Nothing stored for '%s' (%s).\n", sc.Name, sc.URL)
			}
			return nil
		},
	}
}

// oauthServer loads the config and returns the server named by the one
// argument, which must be a streamable HTTP server, with a logger whose
// redactor learns the tokens.
func oauthServer(c *cli.Context, cmd string) (*config.Server, *slog.Logger, *redact.Redactor, error) {
	args, err := positionalArgs(c)
	if err != nil {
		return nil, nil, nil, cli.Exit(err.Error(), exitConfig)
	}
	if len(args) != 1 {
		return nil, nil, nil, cli.Exit(fmt.Sprintf("usage: mcp-hub %s NAME (a url server of the config)", cmd), exitConfig)
	}
	log, err := newLogger(c, nil)
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := loadConfig(c, log)
	if err != nil {
		return nil, nil, nil, err
	}
	red := redact.New(cfg.Secrets)
	log, _ = newRedactingLogger(c, red)
	name := args[0]
	sc, ok := cfg.Servers[name]
	if !ok {
		return nil, nil, nil, cli.Exit(fmt.Sprintf("no server '%s' in %s (servers: %s)", name, cfg.Path, strings.Join(cfg.ServerOrder, ", ")), exitConfig)
	}
	if sc.Kind() != config.TransportStreamable {
		return nil, nil, nil, cli.Exit(fmt.Sprintf("server '%s' is a %s server: OAuth applies to streamable HTTP (url) servers only", name, sc.Kind()), exitConfig)
	}
	return sc, log, red, nil
}

// oauthOptions opens the token store. interactive lets a server's demand
// for more scope open a browser in this process.
func oauthOptions(c *cli.Context, interactive bool) (upstream.OAuthOptions, error) {
	dir, err := tokenstore.DefaultDir()
	if err != nil {
		return upstream.OAuthOptions{}, err
	}
	store, err := tokenstore.Open(dir)
	if err != nil {
		return upstream.OAuthOptions{}, err
	}
	return upstream.OAuthOptions{Store: store, Interactive: interactive, Prompt: c.App.ErrWriter}, nil
}

// interactive reports whether this process may open a browser for a
// step-up: a person is at the terminal, or $BROWSER says how.
func interactive() bool {
	return isTerminal(os.Stdin) || os.Getenv("BROWSER") != ""
}
