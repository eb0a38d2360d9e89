package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/gateway/dashboard"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/version"
	"github.com/mcp-hub/mcp-hub/upstream"
)

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the hub over stdio (default) or streamable HTTP",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "http", Usage: "serve streamable HTTP on this address (e.g. 127.0.0.1:8080) at /mcp and /mcp/<toolset>"},
			&cli.StringFlag{Name: "toolset", Usage: "expose only this toolset (stdio; over HTTP use /mcp/<toolset>)"},
			&cli.BoolFlag{Name: "chat-api", Usage: "with --http: also serve POST /v1/chat (the chat loop over HTTP)"},
			&cli.DurationFlag{Name: "watch-interval", Value: DefaultWatchInterval,
				Usage: "re-read the config file this often and apply what changed (0: only on SIGHUP)"},
			&cli.IntFlag{Name: "max-name-length", Usage: fmt.Sprintf("cut exposed tool and prompt names to `N` characters (%d-%d; overrides max_name_length; install cursor sets it)", config.MinNameLength, config.MaxNameLength)},
			&cli.StringFlag{Name: "metrics", Usage: "also serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9464), next to stdio or --http"},
			&cli.BoolFlag{Name: "allow-unauthenticated", EnvVars: []string{"MCP_HUB_ALLOW_UNAUTHENTICATED"},
				Usage: "let --http/--metrics listen beyond loopback with no auth configured (anyone who reaches the port can call every tool)"},
			&cli.BoolFlag{Name: "share-cpus", EnvVars: []string{"MCP_HUB_SHARE_CPUS"},
				Usage: "run on as few CPUs as keep up with the load (re-read every second; ignored when GOMAXPROCS is set)"},
			&cli.BoolFlag{Name: "allow-auth-change",
				Usage: "let a config reload remove or weaken auth (fewer tokens, no issuer, ...); without it such a reload is refused while --http/--metrics listen"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a CPU profile to this file until the hub stops", Hidden: true},
		},
		Action: func(c *cli.Context) error {
			if p := c.String("cpuprofile"); p != "" {
				stop, err := startCPUProfile(p)
				if err != nil {
					return err
				}
				defer stop()
			}
			if n := c.Int("max-name-length"); c.IsSet("max-name-length") && (n < config.MinNameLength || n > config.MaxNameLength) {
				return cli.Exit(fmt.Sprintf("--max-name-length must be between %d and %d", config.MinNameLength, config.MaxNameLength), exitConfig)
			}
			if c.Duration("watch-interval") < 0 {
				return cli.Exit("--watch-interval must be 0 (only SIGHUP) or positive", exitConfig)
			}
			watcher := newConfigWatcher(configPath(c)) // before the hub reads the file
			watcher.allowAuthChange = c.Bool("allow-auth-change")
			// A step-up opens a browser only when $BROWSER says how: serve
			// never waits on a person otherwise.
			g, log, closeHub, err := openHubWith(c, os.Getenv("BROWSER") != "")
			if err != nil {
				return err
			}
			defer closeHub()
			h := g.Hub()
			hintLogins(log, h)
			if addr := c.String("metrics"); addr != "" {
				stop, err := serveMetrics(c, g, log, watcher, addr)
				if err != nil {
					return err
				}
				defer stop()
			}
			if c.Bool("share-cpus") {
				shareCPUs(c.Context) // after start-up, which builds the index on every core
			}
			watchCtx, stopWatching := context.WithCancel(c.Context)
			defer stopWatching()
			go watcher.run(watchCtx, g, log, c.Duration("watch-interval"))
			if addr := c.String("http"); addr != "" {
				return serveHTTP(c, g, log, watcher, addr)
			}
			if c.Bool("chat-api") {
				return cli.Exit("--chat-api needs --http", exitConfig)
			}
			if _, err := h.Toolset(c.String("toolset")); err != nil {
				return cli.Exit(err.Error(), exitConfig)
			}
			if isTerminal(os.Stdin) {
				printWelcome(c.App.ErrWriter, h, configPath(c))
			}
			err = h.ServeStdio(c.Context, c.String("toolset"), c.App.Reader.(io.ReadCloser), nopCloser{c.App.Writer})
			if err != nil && c.Context.Err() == nil && !errors.Is(err, io.EOF) {
				return err
			}
			return nil
		},
	}
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// checkOpenBind fails closed: a listener beyond loopback needs auth in
// the config, or --allow-unauthenticated. Without the flag, the watcher
// also refuses a reload that would remove auth. On any listener, loopback
// included, the watcher refuses a reload that would weaken auth
// (checkAuthChange).
func checkOpenBind(c *cli.Context, g *gateway.Gateway, log *slog.Logger, w *configWatcher, ln net.Listener, flag string) error {
	w.guardAuth.Store(true)
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	if c.Bool("allow-unauthenticated") {
		if !g.AuthRequired() {
			log.Warn("LISTENING BEYOND THIS MACHINE WITHOUT AUTH (--allow-unauthenticated): anyone who can reach " + ln.Addr().String() +
				" can call every tool. Set auth.tokens or auth.oauth in the config, or bind 127.0.0.1.")
		}
		return nil
	}
	w.requireAuth.Store(true)
	if !g.AuthRequired() {
		ln.Close()
		return cli.Exit(fmt.Sprintf("%s %s listens beyond this machine, and the config has no auth: anyone who could reach it could call every tool. "+
			"Set auth.tokens or auth.oauth in the config, bind 127.0.0.1, or pass --allow-unauthenticated to serve it open on purpose", flag, ln.Addr()), exitConfig)
	}
	return nil
}

func serveHTTP(c *cli.Context, g *gateway.Gateway, log *slog.Logger, w *configWatcher, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return cli.Exit(fmt.Sprintf("--http %s: %v", addr, err), exitConfig)
	}
	if err := checkOpenBind(c, g, log, w, ln, "--http"); err != nil {
		return err
	}
	ui := dashboard.New(g)
	extra := map[string]http.Handler{gateway.UIPath: ui, gateway.UIPath + "/": ui}
	if c.Bool("chat-api") {
		handler, err := chatAPIHandler(c, g.Hub())
		if err != nil {
			return err
		}
		extra["/v1/chat"] = handler
	}
	srv := g.NewHTTPServer(extra)
	if addr := os.Getenv("MCP_HUB_PPROF"); addr != "" {
		if err := servePprof(c.Context, addr, log); err != nil {
			return cli.Exit(fmt.Sprintf("MCP_HUB_PPROF=%s: %v", addr, err), exitConfig)
		}
	}
	log.Info("serving streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp", "health", "http://"+ln.Addr().String()+"/healthz",
		"dashboard", "http://"+ln.Addr().String()+gateway.UIPath, "metrics", "http://"+ln.Addr().String()+"/metrics")
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-c.Context.Done():
	}
	// Upstreams first: calls in flight end with an error at once, instead
	// of holding Shutdown for its whole grace period.
	g.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(ctx)
	return nil
}

// serveMetrics serves /metrics on a listener of its own (serve --metrics),
// with the same Host check and auth as /mcp.
func serveMetrics(c *cli.Context, g *gateway.Gateway, log *slog.Logger, w *configWatcher, addr string) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("--metrics %s: %v", addr, err), exitConfig)
	}
	if err := checkOpenBind(c, g, log, w, ln, "--metrics"); err != nil {
		return nil, err
	}
	srv := g.NewMetricsServer()
	go srv.Serve(ln)
	log.Info("serving Prometheus metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() { srv.Close() }, nil
}

// startCPUProfile is for performance work: profile before guessing.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// hintLogins says at start which servers wait for `mcp-hub login`.
func hintLogins(log *slog.Logger, h *hub.Hub) {
	for _, st := range h.Upstreams() {
		if st.State == upstream.StateNeedsLogin {
			log.Warn(fmt.Sprintf("server '%s' needs authorization: run `mcp-hub login %s`; its tools fail until then, and the login is picked up without a restart", st.Name, st.Name))
		}
	}
}

func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// printWelcome tells a person who ran `mcp-hub serve` by hand what is
// connected and how to register the hub in a client: on a terminal, stdin
// is not an MCP client.
func printWelcome(w io.Writer, h *hub.Hub, cfgPath string) {
	exe, _ := os.Executable()
	abs, _ := filepath.Abs(cfgPath)
	fmt.Fprintf(w, "mcp-hub %s: serving MCP on stdio (waiting for a client on stdin).\n\n", version.Version)
	for _, st := range h.Upstreams() {
		fmt.Fprintf(w, "  %-16s %-10s %3d tools  %s\n", st.Name, st.State, st.Tools, st.LastError)
	}
	fmt.Fprintf(w, "\nRegister it in Claude Desktop (claude_desktop_config.json):\n"+
		"  {\"mcpServers\": {\"hub\": {\"command\": %q, \"args\": [\"--config\", %q, \"serve\"]}}}\n"+
		"or in Claude Code:\n  claude mcp add hub -- %s --config %s serve\n\nPress Ctrl-C to stop.\n", exe, abs, exe, abs)
}
