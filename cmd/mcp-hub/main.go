// Command mcp-hub serves many MCP servers as one, with tool discovery.
//
// Usage: mcp-hub COMMAND [--config FILE] [flags]. See `mcp-hub help`.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"syscall"

	"github.com/urfave/cli/v2"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-hub/mcp-hub/builtin"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/gateway/redisstore"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/version"
	"github.com/mcp-hub/mcp-hub/sandbox"
	"github.com/mcp-hub/mcp-hub/third_party/go-sdk/mcp"
)

func main() {
	// Inside a Linux sandbox the hub runs itself as the server's first
	// process (sandbox.RunHelper): before anything else, with nothing of
	// the CLI.
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperCommand {
		os.Exit(sandbox.RunHelper(os.Args[2:]))
	}
	profileMemory()
	followMemoryLimit()
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}

// followMemoryLimit gives the Go runtime a soft memory limit of 90% of the
// container's (cgroup memory.max) when the hub runs in one and the user
// set no GOMEMLIMIT: the collector then works harder as the process nears
// the limit instead of the kernel killing it. Outside a container, or with
// GOMEMLIMIT or GOGC set, the runtime's defaults apply unchanged. GOGC is
// left at the runtime's default: a hub's live heap is a few MB, and a
// higher GOGC only grows an idle hub's memory (docs/performance.md).
func followMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	if limit, ok := containerMemoryLimit(); ok {
		debug.SetMemoryLimit(limit / 10 * 9)
	}
}

// profileMemory turns the heap profiler off unless MCP_HUB_PPROF asks for
// profiles (pprof.go). Go samples an allocation every 512 KiB by default,
// since the program links net/http/pprof: each sample unwinds its stack,
// touching the program's tables, and keeps a record for good.
func profileMemory() {
	if os.Getenv("MCP_HUB_PPROF") == "" {
		runtime.MemProfileRate = 0
	}
}

// exitConfig is the exit code for a bad config file or bad arguments.
const exitConfig = 2

// run is main with its inputs and outputs explicit, for tests.
func run(args []string, stdin io.ReadCloser, stdout, stderr io.Writer) int {
	return runApp(newApp(stdin, stdout, stderr), args)
}

// runApp runs app on args and turns its error into an exit code, with the
// message on app.ErrWriter.
func runApp(app *cli.App, args []string) int {
	stderr := app.ErrWriter
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := app.RunContext(ctx, hoistFlags(app, args))
	if err == nil {
		return 0
	}
	var cfgErr *config.Error
	var exitErr cli.ExitCoder
	switch {
	case errors.As(err, &exitErr):
		if msg := exitErr.Error(); msg != "" {
			fmt.Fprintln(stderr, "mcp-hub:", msg)
		}
		return exitErr.ExitCode()
	case errors.As(err, &cfgErr):
		fmt.Fprintln(stderr, "mcp-hub: config error:")
		fmt.Fprintln(stderr, indent(err.Error()))
		return exitConfig
	}
	fmt.Fprintln(stderr, "mcp-hub:", err)
	return 1
}

// newApp is the command tree. Every command, at any depth, takes the
// global flags (flags.go) before or after its name.
func newApp(stdin io.ReadCloser, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:                 "mcp-hub",
		Usage:                "serve many MCP servers as one, with tool search",
		Version:              version.Version,
		Reader:               stdin,
		Writer:               stdout,
		ErrWriter:            stderr,
		EnableBashCompletion: true,
		Flags:                globalFlags(true),
		Commands: []*cli.Command{
			serveCommand(),
			toolsCommand(),
			serversCommand(),
			searchCommand(),
			configCommand(),
			importCommand(),
			installCommand(),
			uninstallCommand(),
			evalCommand(),
			chatCommand(),
			callCommand(),
			pinsCommand(),
			loginCommand(),
			logoutCommand(),
			modelsCommand(),
			completionCommand(),
			versionCommand(),
		},
		ExitErrHandler: func(*cli.Context, error) {}, // run reports errors
	}
	addGlobalFlags(app.Commands)
	return app
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, and how this binary was built",
		Action: func(c *cli.Context) error {
			fmt.Fprintln(c.App.Writer, "mcp-hub", version.Version)
			if info := buildInfo(); info != "" {
				fmt.Fprintln(c.App.Writer, info)
			}
			return nil
		},
	}
}

// sdkBuild names the go-sdk mcp-hub is built with, whichever way it is
// built: the published version plus our patch, as packages of our module
// (third_party/README.md). scripts/go-sdk.sh keeps the version in step.
const sdkBuild = "go-sdk v1.8.0 with third_party/go-sdk.patch"

// buildInfo says which module version and which go-sdk went into the
// binary.
func buildInfo() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return fmt.Sprintf("module %s, %s, %s %s/%s", bi.Main.Version, sdkBuild, bi.GoVersion, runtime.GOOS, runtime.GOARCH)
}

// configPath resolves --config: the flag, else ./hub.yaml, else
// <user config dir>/mcp-hub/hub.yaml.
func configPath(c *cli.Context) string {
	if p := globalString(c, "config"); p != "" {
		return p
	}
	if _, err := os.Stat("hub.yaml"); err == nil {
		return "hub.yaml"
	}
	if dir, err := os.UserConfigDir(); err == nil {
		p := filepath.Join(dir, "mcp-hub", "hub.yaml")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "hub.yaml"
}

// loadConfig loads the config and reports its warnings on the log.
func loadConfig(c *cli.Context, log *slog.Logger) (*config.Config, error) {
	cfg, err := config.Load(configPath(c), builtin.Names())
	if err != nil {
		return nil, err
	}
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	return cfg, nil
}

// openHub loads the config and starts a hub, within its gateway, with
// logs on stderr. Servers that need an OAuth login are needs_login; no
// browser opens. closeHub closes the gateway and the hub, then sends the
// spans still queued (when tracing).
func openHub(c *cli.Context) (g *gateway.Gateway, log *slog.Logger, closeHub func(), err error) {
	return openHubWith(c, false)
}

// openHubWith is openHub; interactive lets a server's demand for more
// OAuth scope open a browser (see upstream.OAuthOptions).
func openHubWith(c *cli.Context, interactive bool) (*gateway.Gateway, *slog.Logger, func(), error) {
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
	oauth, err := oauthOptions(c, interactive)
	if err != nil {
		log.Warn("OAuth is off: no token store", "err", err)
	}
	tp, stopTracing, err := startTracing(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	g, err := gateway.New(c.Context, cfg, gatewayOptions(cfg, hub.Options{Logger: log, OAuth: oauth, Redactor: red, MaxNameLength: c.Int("max-name-length")}, tp))
	if err != nil {
		stopTracing()
		return nil, nil, nil, err
	}
	return g, log, func() { g.Close(); stopTracing() }, nil
}

// gatewayOptions wires the program's implementations into the gateway:
// the builtin servers (bounded by cfg's max_result_bytes, as every
// upstream's answer is), the tracer provider, and Redis as the session
// store.
func gatewayOptions(cfg *config.Config, o hub.Options, tp trace.TracerProvider) gateway.Options {
	o.Builtin = hubBuiltins(cfg, o.Logger)
	return gateway.Options{Hub: o, TracerProvider: tp, OpenStore: redisstore.Open}
}

// hubBuiltins is hub.Options.Builtin as the program sets it: package
// builtin's servers, their results bounded like any upstream's.
func hubBuiltins(cfg *config.Config, log *slog.Logger) func(string, map[string]string) (*mcp.Server, error) {
	return builtin.Maker(builtin.Options{Logger: log, MaxResultBytes: int(min(cfg.ResultLimit(), builtin.MaxResultFrame))})
}

func indent(s string) string {
	out := "  "
	for _, r := range s {
		out += string(r)
		if r == '\n' {
			out += "  "
		}
	}
	return out
}
