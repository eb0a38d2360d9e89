package chatloop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// REPLOptions wire the REPL to its terminal. Everything is an io.Reader or
// io.Writer so tests can drive it through pipes.
type REPLOptions struct {
	In io.Reader
	// Out gets the prompt and the answers, streamed as they arrive.
	Out io.Writer
	// Err gets each tool call with its duration, errors and /stats.
	Err io.Writer
	// Interrupts cancels the running turn (the CLI passes SIGINT); while
	// no turn runs it only prints how to quit. nil = no interrupts.
	Interrupts <-chan os.Signal
	// Prompt defaults to "> ".
	Prompt string
}

const replHelp = `commands: /reset (forget the conversation; loaded tools stay loaded), /tools (list the session's tools), /stats, /exit (or Ctrl-D). Ctrl-C cancels the running answer.`

// RunREPL reads one user turn per line until EOF or /exit. History is kept
// across turns, and so are the tools loaded in the hub session. A failed
// or cancelled turn is reported on Err and the REPL goes on.
func RunREPL(ctx context.Context, chat *Chat, o REPLOptions) error {
	if o.Prompt == "" {
		o.Prompt = "> "
	}
	var (
		outMu     sync.Mutex // Out and Err writes come from tool goroutines too
		lineStart = true
		curMu     sync.Mutex
		cancelCur context.CancelFunc
	)
	writeOut := func(s string) {
		outMu.Lock()
		defer outMu.Unlock()
		io.WriteString(o.Out, s)
		if s != "" {
			lineStart = strings.HasSuffix(s, "\n")
		}
	}
	writeErr := func(format string, a ...any) {
		outMu.Lock()
		defer outMu.Unlock()
		if !lineStart {
			// End the streamed text before a tool line so they do not run
			// together on a terminal.
			io.WriteString(o.Out, "\n")
			lineStart = true
		}
		fmt.Fprintf(o.Err, format, a...)
	}
	// A structured answer is known only at the end: printed, not streamed.
	chat.SetStream(chat.opts.ResponseSchema == nil)
	chat.SetObserver(Observer{
		Text: writeOut,
		ToolDone: func(call ToolCall, r ToolResult, took time.Duration) {
			status := ""
			if r.IsError {
				status = " error: " + clip(resultText(r.Parts, false), 120)
			}
			writeErr("  [tool] %s %s (%s)%s\n", call.Name, clip(string(call.Arguments), 100), took.Round(time.Millisecond), status)
		},
		Degraded: func(reason string) {
			writeErr("(answering without tools: %s)\n", clip(reason, 300))
		},
	})

	stop := make(chan struct{})
	defer close(stop)
	if o.Interrupts != nil {
		go func() {
			for {
				select {
				case <-stop:
					return
				case _, ok := <-o.Interrupts:
					if !ok {
						return
					}
					curMu.Lock()
					if cancelCur != nil {
						cancelCur()
						writeErr("\n(cancelling)\n")
					} else {
						writeErr("\n(/exit or Ctrl-D to quit)\n")
					}
					curMu.Unlock()
				}
			}
		}()
	}

	// Lines are read on their own goroutine so that an approval question
	// asked during a turn can take the next line, and give up when the
	// turn is cancelled.
	type input struct {
		line string
		ok   bool
	}
	lines := make(chan input)
	var readErr error
	go func() {
		sc := bufio.NewScanner(o.In)
		sc.Buffer(make([]byte, 64*1024), 4<<20)
		for sc.Scan() {
			select {
			case lines <- input{sc.Text(), true}:
			case <-stop:
				return
			}
		}
		readErr = sc.Err()
		select {
		case lines <- input{}:
		case <-stop:
		}
	}()
	var approveMu sync.Mutex
	chat.opts.Approver = func(ctx context.Context, req ApprovalRequest) Decision {
		approveMu.Lock()
		defer approveMu.Unlock()
		choices := "y/N"
		if req.OfferAlways {
			choices = "y/N/always"
		}
		writeErr("approve %s %s? (%s) [%s] ", req.Tool, clip(string(req.Call.Arguments), 200), req.Why, choices)
		select {
		case in := <-lines:
			if !in.ok {
				writeErr("\n")
				return Refuse
			}
			switch strings.ToLower(strings.TrimSpace(in.line)) {
			case "y", "yes":
				return Allow
			case "a", "always":
				if req.OfferAlways {
					return AllowAlways
				}
				return Allow
			}
			return Refuse
		case <-ctx.Done():
			writeErr("\n")
			return Refuse
		}
	}
	for {
		writeOut(o.Prompt)
		in := <-lines
		if !in.ok {
			writeOut("\n")
			return readErr
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		line := strings.TrimSpace(in.line)
		// The user's Enter ended the prompt line.
		outMu.Lock()
		lineStart = true
		outMu.Unlock()
		switch {
		case line == "":
			continue
		case line == "/exit" || line == "/quit":
			return nil
		case line == "/help":
			writeErr("%s\n", replHelp)
			continue
		case line == "/reset":
			chat.Reset()
			writeErr("(conversation cleared)\n")
			continue
		case line == "/stats":
			s := chat.Stats()
			outMu.Lock()
			s.Write(o.Err)
			outMu.Unlock()
			continue
		case line == "/tools":
			tools, _, err := chat.session.Tools(ctx)
			if err != nil {
				writeErr("error: %v\n", err)
				continue
			}
			writeErr("%s\n", strings.Join(toolNames(tools), "\n"))
			continue
		case strings.HasPrefix(line, "/"):
			writeErr("unknown command %s; %s\n", line, replHelp)
			continue
		}

		turnCtx, cancel := context.WithCancel(ctx)
		curMu.Lock()
		cancelCur = cancel
		curMu.Unlock()
		answer, err := chat.Send(turnCtx, line)
		curMu.Lock()
		cancelCur = nil
		curMu.Unlock()
		cancel()

		if !chat.opts.Stream || chat.opts.Observer.Text == nil {
			writeOut(answer)
		}
		if !lineStart {
			writeOut("\n")
		}
		var mr *MaxRoundsError
		switch {
		case err == nil:
		case errors.Is(err, context.Canceled) && ctx.Err() == nil:
			writeErr("(cancelled; the conversation is as it was before this message)\n")
		case errors.As(err, &mr):
			writeErr("%v\n", err)
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			writeErr("error: %v\n", err)
		}
	}
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}
