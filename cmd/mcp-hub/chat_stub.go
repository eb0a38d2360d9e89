//go:build !chatloop_ready

package main

// TEMPORARY STUB by the lead so the CLI builds while chat.go is written.
// Whoever writes cmd/mcp-hub/chat.go: DELETE THIS FILE, and define in chat.go
//   func chatCommand() *cli.Command
//   func modelsCommand() *cli.Command
//   func chatAPIHandler(c *cli.Context, h *hub.Hub) (http.Handler, error)  // for `serve --http --chat-api`, mounted at /v1/chat
// (h.Connect(ctx, toolset, client) opens an in-memory session; h.Config() has Providers/Models/Chat yaml.Node fields.)

import (
	"errors"
	"net/http"

	"github.com/urfave/cli/v2"

	"github.com/mcp-hub/mcp-hub/hub"
)

func chatCommand() *cli.Command   { return &cli.Command{Name: "chat", Usage: "(not built yet)"} }
func modelsCommand() *cli.Command { return &cli.Command{Name: "models", Usage: "(not built yet)"} }
func chatAPIHandler(*cli.Context, *hub.Hub) (http.Handler, error) {
	return nil, errors.New("chat API not built yet")
}
