//go:build linux

package main

// Google's Gemini CLI as a real client (npm @google/gemini-cli, `gemini -p`),
// with GOOGLE_GEMINI_BASE_URL pointing at a Gemini API on 127.0.0.1.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// geminiCLI is `gemini -p` run by Node 22 (it needs Node 20 or newer). It
// names an MCP server's tools "mcp_<server>_<tool>". On list_changed it
// re-lists at once (the hub's result waits for that), but its next model
// call usually goes out before an internal "MCP context refresh" it runs
// after the re-list (it reloads memory files) has finished, with the old
// list: nothing on the MCP wire says when that refresh is done.
var geminiCLI = realClient{
	name:   "Gemini CLI",
	env:    "MCP_HUB_GEMINI",
	node:   true,
	prefix: "mcp_hub_",
	next:   listedAlways, // TMP
	api:    geminiAPI,
	version: func(cmd []string) string {
		out, _ := exec.Command(cmd[0], append(cmd[1:], "--version")...).Output()
		return strings.TrimSpace(string(out))
	},
	run: runGemini,
}

func runGemini(ctx context.Context, cmdline []string, home, modelURL string, hub hubServer, prompt string) (string, error) {
	server := map[string]any{"httpUrl": hub.url, "trust": true}
	if hub.url == "" {
		server = map[string]any{"command": hub.command[0], "args": hub.command[1:], "env": hub.env, "trust": true}
	}
	settings, _ := json.Marshal(map[string]any{
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"mcpServers": map[string]any{"hub": server},
		// Nothing that would reach for the network.
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
	})
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), settings, 0o600); err != nil {
		return "", err
	}
	// A fixed model: with the default ("auto") every turn first asks a
	// small model to route it.
	args := append(cmdline[1:], "-p", prompt, "--model", "gemini-2.5-pro", "--yolo", "--output-format", "text")
	cmd := exec.CommandContext(ctx, cmdline[0], args...)
	cmd.Dir = home
	cmd.Env = []string{
		"HOME=" + home,
		"PATH=" + os.Getenv("PATH"),
		"GEMINI_API_KEY=test-key",
		"GOOGLE_GEMINI_BASE_URL=" + modelURL,
		"GEMINI_CLI_TRUST_WORKSPACE=true",
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("gemini: %w\nstderr: %s", err, stderr.String())
	}
	return stdout.String(), nil
}

// geminiAPI serves the Gemini API's generateContent, streamGenerateContent
// (?alt=sse) and countTokens under /v1beta/models/.
func geminiAPI(t *testing.T, script *calcTurn) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model, method, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1beta/models/"), ":")
		if r.Method != http.MethodPost || !ok {
			http.Error(w, `{"error":{"code":404,"message":"not found","status":"NOT_FOUND"}}`, http.StatusNotFound)
			return
		}
		var req geminiRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, fmt.Sprintf(`{"error":{"code":400,"message":%q,"status":"INVALID_ARGUMENT"}}`, err.Error()), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if method == "countTokens" {
			fmt.Fprint(w, `{"totalTokens":100}`)
			return
		}
		move := script.move(req.view())
		part := map[string]any{"text": move.text}
		if c := move.call; c != nil {
			part = map[string]any{"functionCall": map[string]any{"id": c.id, "name": c.name, "args": c.args}}
		}
		resp, _ := json.Marshal(map[string]any{
			"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
			"modelVersion":  model,
		})
		if method == "streamGenerateContent" {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "data: %s\r\n\r\n", resp)
			return
		}
		w.Write(resp)
	})
}

// geminiRequest is the part of a generateContent request the script reads.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text             string `json:"text"`
			FunctionResponse *struct {
				Name     string          `json:"name"`
				Response json.RawMessage `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

func (r *geminiRequest) view() modelView {
	var v modelView
	for _, t := range r.Tools {
		for _, f := range t.FunctionDeclarations {
			v.tools = append(v.tools, f.Name)
		}
	}
	if len(r.Contents) == 0 || r.Contents[len(r.Contents)-1].Role != "user" {
		return v
	}
	for _, p := range r.Contents[len(r.Contents)-1].Parts {
		if fr := p.FunctionResponse; fr != nil {
			v.results = append(v.results, toolResult{tool: fr.Name, text: string(fr.Response)})
		} else {
			v.prompt += p.Text
		}
	}
	return v
}
