package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/chatloop"
	"github.com/mcp-hub/mcp-hub/config"
	"github.com/mcp-hub/mcp-hub/gateway"
	"github.com/mcp-hub/mcp-hub/hub"
	"github.com/mcp-hub/mcp-hub/internal/redact"
	"github.com/mcp-hub/mcp-hub/internal/tokenstore"
)

func chatCommand() *cli.Command {
	return &cli.Command{
		Name:  "chat",
		Usage: "chat with an LLM that uses the hub's tools (REPL, or one-shot with -p)",
		Description: `Drives a model from hub.yaml's models: through the hub, as an ordinary MCP client:
it finds deferred tools with search_tools and calls them. Without -p it is a REPL
(history kept across turns; /help for commands; Ctrl-C cancels the running answer,
Ctrl-D quits). With -p it answers one prompt on stdout and exits non-zero on failure.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "prompt", Aliases: []string{"p"}, Usage: "one-shot: answer `PROMPT` on stdout and exit"},
			&cli.StringFlag{Name: "model", Aliases: []string{"m"}, Usage: "model `NAME` from hub.yaml models (default: chat.default_model)"},
			&cli.StringFlag{Name: "toolset", Aliases: []string{"t"}, Usage: "restrict the session to toolset `NAME`"},
			&cli.StringFlag{Name: "system", Usage: "system prompt (overrides the model's system and the default)"},
			&cli.BoolFlag{Name: "json", Usage: "print the final messages and stats as JSON on stdout"},
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "with -p: run tools that need approval (destructiveHint, chat.approve_tools) without asking; without it -p refuses them"},
			&cli.StringFlag{Name: "schema", Usage: "make each final answer a JSON object valid against the JSON schema in `FILE`"},
			&cli.BoolFlag{Name: "stats", Usage: "print stats (model calls, tokens, tool calls, searches) on stderr at the end"},
		},
		Action: runChat,
	}
}

// chatLogger logs to stderr like the other commands, but at warn unless
// --log-level was given: hub info lines would drown the conversation.
func chatLogger(c *cli.Context, r *redact.Redactor) (*slog.Logger, error) {
	if globalSet(c, "log-level") {
		return newRedactingLogger(c, r)
	}
	h := slog.NewTextHandler(c.App.ErrWriter, &slog.HandlerOptions{Level: slog.LevelWarn})
	return slog.New(redactHandler{Handler: h, r: r}), nil
}

// chatConfig loads hub.yaml (which decodes and checks its chat sections)
// and makes the chat's config of it.
func chatConfig(c *cli.Context) (*config.Config, *chatloop.Config, *slog.Logger, error) {
	log, err := chatLogger(c, redact.New())
	if err != nil {
		return nil, nil, nil, err
	}
	cfg, err := loadConfig(c, log)
	if err != nil {
		return nil, nil, nil, err
	}
	log, err = chatLogger(c, redact.New(cfg.Secrets))
	if err != nil {
		return nil, nil, nil, err
	}
	cc, err := decodeChatConfig(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return cfg, cc, log, nil
}

// decodeChatConfig is the chat's config of cfg: its templates parsed,
// and chat.preselect's ranking built on discovery.embeddings.
func decodeChatConfig(cfg *config.Config) (*chatloop.Config, error) {
	cc, err := chatloop.FromConfig(cfg)
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("config error in %s:\n%s", cfg.Path, indent(err.Error())), exitConfig)
	}
	if p := cc.Chat.Preselect; p.TopK > 0 {
		if cfg.Discovery.Embeddings == nil {
			return nil, cli.Exit(fmt.Sprintf("config error in %s:\n  chat.preselect needs an embeddings endpoint: set discovery.embeddings: {provider: ollama, model: nomic-embed-text}", cfg.Path), exitConfig)
		}
		stateDir, _ := tokenstore.DefaultDir() // none: vectors kept in memory
		if cc.Preselector, err = chatloop.NewPreselector(*cfg.Discovery.Embeddings, p, stateDir, nil); err != nil {
			return nil, cli.Exit(fmt.Sprintf("config error in %s:\n  discovery.embeddings: %v", cfg.Path, err), exitConfig)
		}
	}
	return cc, nil
}

func runChat(c *cli.Context) error {
	if c.Args().Present() {
		return cli.Exit(fmt.Sprintf("unexpected argument %q; pass the prompt with -p \"...\"", c.Args().First()), exitConfig)
	}
	cfg, cc, log, err := chatConfig(c)
	if err != nil {
		return err
	}
	// Fail on a bad --model or a missing key before starting upstreams.
	name, m, _, err := cc.ResolveModel(c.String("model"))
	if err != nil {
		return cli.Exit(err.Error(), exitConfig)
	}
	if _, err := cc.NewProvider(m.Provider); err != nil {
		return cli.Exit(fmt.Sprintf("model %s: %v", name, err), exitConfig)
	}

	var schema *chatloop.ResponseSchema
	if path := c.String("schema"); path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return cli.Exit(fmt.Sprintf("--schema: %v", err), exitConfig)
		}
		if schema, err = chatloop.ParseResponseSchema(data); err != nil {
			return cli.Exit(fmt.Sprintf("--schema %s: %v", path, err), exitConfig)
		}
	}

	oneShot := c.IsSet("prompt")
	// In the REPL the first Ctrl-C must cancel the running answer, not the
	// program; main's signal context would end everything (the hub's
	// upstreams included), so the REPL runs on a context only SIGTERM ends
	// and takes Ctrl-C from its own channel.
	ctx := c.Context
	var interrupts chan os.Signal
	if !oneShot {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(context.WithoutCancel(c.Context))
		defer cancel()
		interrupts = make(chan os.Signal, 1)
		signal.Notify(interrupts, os.Interrupt)
		defer signal.Stop(interrupts)
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		defer signal.Stop(term)
		go func() {
			select {
			case <-term:
				cancel()
			case <-ctx.Done():
			}
		}()
	}

	// The hub's redactor learns OAuth tokens; the chat log uses it too.
	red := redact.New(cfg.Secrets)
	if log, err = chatLogger(c, red); err != nil {
		return err
	}
	oauth, err := oauthOptions(c, interactive())
	if err != nil {
		return err
	}
	tp, stopTracing, err := startTracing(cfg)
	if err != nil {
		return err
	}
	defer stopTracing() // after the hub closed: the deferred calls run in reverse
	g, err := gateway.New(ctx, cfg, gatewayOptions(cfg, hub.Options{Logger: log, OAuth: oauth, Redactor: red}, tp))
	if err != nil {
		return err
	}
	defer g.Close()
	session, err := chatloop.Dial(ctx, chatHub{g.Hub()}, c.String("toolset"), log)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer session.Close()
	stdout, stderr := c.App.Writer, c.App.ErrWriter
	co := chatloop.ChatOptions{Model: name, System: c.String("system"), Logger: log, ResponseSchema: schema, DefaultApprove: config.ApproveOnMiss}
	if oneShot {
		// Nobody to ask: refuse what needs approval unless --yes, as the
		// REPL would until the user said yes (chat.approve: off in the
		// config runs such tools without asking, here as everywhere).
		yes := c.Bool("yes")
		co.AllowHint = "To allow it, the user can run mcp-hub chat -p again with --yes, or set chat.approve: off in the hub's config."
		co.Approver = func(_ context.Context, req chatloop.ApprovalRequest) chatloop.Decision {
			if yes {
				return chatloop.Allow
			}
			fmt.Fprintf(stderr, "(refused %s: %s; pass --yes to allow tools that need approval)\n", req.Tool, req.Why)
			return chatloop.Unasked
		}
	}
	chat, err := cc.NewChat(session, co)
	if err != nil {
		return cli.Exit(err.Error(), exitConfig)
	}

	var turnErr error
	if oneShot {
		chat.SetObserver(chatloop.Observer{ToolDone: func(call chatloop.ToolCall, r chatloop.ToolResult, took time.Duration) {
			printToolLine(stderr, call, r, took)
		}, Degraded: func(reason string) {
			fmt.Fprintf(stderr, "(answering without tools: %s)\n", reason)
		}})
		var answer string
		answer, turnErr = chat.Send(ctx, c.String("prompt"))
		if !c.Bool("json") && turnErr == nil {
			fmt.Fprintln(stdout, strings.TrimRight(answer, "\n"))
		}
	} else {
		opts := chat.Options()
		tools, _, _ := session.Tools(ctx)
		fmt.Fprintf(stderr, "mcp-hub chat: model %s (%s via %s), %d tools; /help for commands, Ctrl-D to quit\n",
			opts.ModelName, opts.Model, opts.Provider.Name(), len(tools))
		turnErr = chatloop.RunREPL(ctx, chat, chatloop.REPLOptions{
			In: c.App.Reader, Out: stdout, Err: stderr, Interrupts: interrupts,
		})
	}

	stats := chat.Stats()
	if c.Bool("json") {
		out := struct {
			Model    string             `json:"model"`
			Messages []chatloop.Message `json:"messages"`
			Stats    chatloop.Stats     `json:"stats"`
			Degraded string             `json:"degraded,omitempty"`
			Error    string             `json:"error,omitempty"`
		}{Model: chat.Options().ModelName, Messages: chat.History(), Stats: stats, Degraded: chat.Degraded()}
		if turnErr != nil {
			out.Error = turnErr.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			return err
		}
	}
	if c.Bool("stats") {
		stats.Write(stderr)
	}
	if turnErr != nil {
		if errors.Is(turnErr, context.Canceled) {
			return cli.Exit("cancelled", 130)
		}
		return cli.Exit(turnErr.Error(), 1)
	}
	return nil
}

// printToolLine is the -p mode's stderr line per tool call; the REPL
// prints the same shape.
func printToolLine(w io.Writer, call chatloop.ToolCall, r chatloop.ToolResult, took time.Duration) {
	status := ""
	if r.IsError {
		status = " (error)"
	}
	args := strings.Join(strings.Fields(string(call.Arguments)), " ")
	if len(args) > 100 {
		args = args[:100] + "..."
	}
	fmt.Fprintf(w, "  [tool] %s %s (%s)%s\n", call.Name, args, took.Round(time.Millisecond), status)
}

func modelsCommand() *cli.Command {
	return &cli.Command{
		Name:  "models",
		Usage: "list the chat models and providers configured in hub.yaml",
		Action: func(c *cli.Context) error {
			_, cc, _, err := chatConfig(c)
			if err != nil {
				return err
			}
			writeModels(c.App.Writer, cc)
			return nil
		},
	}
}

// writeModels prints the models table, then the providers, with one line
// per provider that cannot be used for lack of a key.
func writeModels(w io.Writer, cc *chatloop.Config) {
	if len(cc.Models) == 0 {
		fmt.Fprintln(w, `no models configured. Add to hub.yaml, for example:
  providers:
    ollama: {type: ollama}
  models:
    local: {provider: ollama, model: llama3.2}
  chat:
    default_model: local`)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MODEL\tPROVIDER\tMODEL ID\tDEFAULT")
	for _, name := range slices.Sorted(maps.Keys(cc.Models)) {
		m := cc.Models[name]
		def := ""
		if name == cc.Chat.DefaultModel {
			def = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, m.Provider, m.Model, def)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROVIDER\tTYPE\tBASE URL\tAPI KEY")
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(cc.Providers)) {
		p := cc.Providers[name]
		base := p.BaseURL
		if base == "" {
			base = "(default)"
		}
		key := "set"
		if p.APIKey == "" {
			key = "none"
		}
		if msg := p.KeyProblem(name); msg != "" {
			key = "MISSING"
			problems = append(problems, msg)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", name, p.Type, base, key)
	}
	tw.Flush()
	for _, p := range problems {
		fmt.Fprintln(w, "warning:", p)
	}
}

// chatAPIHandler is POST /v1/chat for `serve --http --chat-api`; serve
// mounts it behind the same auth as /mcp.
func chatAPIHandler(c *cli.Context, h *hub.Hub) (http.Handler, error) {
	cfg := h.Config()
	cc, err := decodeChatConfig(cfg)
	if err != nil {
		return nil, err
	}
	if len(cc.Models) == 0 {
		return nil, cli.Exit("--chat-api: no models configured in "+cfg.Path+"; add providers: and models: sections (see `mcp-hub models`)", exitConfig)
	}
	log, err := newLogger(c, cfg.Secrets)
	if err != nil {
		return nil, err
	}
	return chatloop.Handler(cc, chatHub{h}, log), nil
}

// chatHub is the hub as the chat sees it, with the servers' health so a
// turn can go on without tools when one fails (chatloop.ServerHealth).
type chatHub struct{ *hub.Hub }

// PrincipalOf is the key of the principal a request was admitted as
// (the HTTP API binds its approvals to it), "" for none.
func (h chatHub) PrincipalOf(ctx context.Context) string {
	if p := hub.PrincipalFrom(ctx); p != nil {
		return p.Key()
	}
	return ""
}

// ServerDown reports whether server is configured and not connected.
func (h chatHub) ServerDown(server string) bool {
	for _, s := range h.Upstreams() {
		if s.Name == server {
			return !s.Ready()
		}
	}
	return false
}
