package chatloop

import (
	"fmt"
	"strings"

	"github.com/mcp-hub/mcp-hub/internal/tokens"
)

// Bounded history. With chat.history set, the conversation is trimmed
// before every model call so that a long agentic turn, or a long REPL
// session, cannot grow without bound:
//
//   - the unit of trimming keeps the wire formats valid: an earlier turn
//     goes whole (its user message and every round after it), a round of
//     the current turn goes as its assistant message with the tool
//     results that answer it, so a tool result never loses its call and
//     Anthropic's user/assistant alternation holds;
//   - the oldest go first: earlier turns, then the current turn's oldest
//     rounds;
//   - the system prompt (not part of the history), the current turn's user
//     message and its latest round never go. When they alone are over the
//     budget they are sent anyway, and the provider decides.
//
// Tokens are estimated with the o200k_base tokenizer the eval command
// uses (OpenAI's current vocabulary; other models' counts differ by some
// percent, so leave headroom). Each message costs its text, tool names and
// arguments and result text, plus a few tokens of framing; an image costs
// its one-line description. Counts are cached per message.

// messageOverhead is the framing a message costs beyond its text (role,
// separators), as OpenAI documents it for chat models.
const messageOverhead = 4

// tokenCounter estimates tokens (o200k_base); the encoding is built on
// first use.
type tokenCounter struct{}

func (tc *tokenCounter) count(s string) int {
	if s == "" {
		return 0
	}
	n, err := tokens.Count(s)
	if err != nil {
		// Invalid UTF-8 and the like: about four bytes a token.
		return len(s)/4 + 1
	}
	return n
}

func (tc *tokenCounter) message(m Message) int {
	var b strings.Builder
	b.WriteString(m.Content)
	for _, c := range m.ToolCalls {
		b.WriteString(c.Name)
		b.Write(c.Arguments)
	}
	for _, r := range m.ToolResults {
		b.WriteString(r.Name)
		b.WriteString(resultText(r.Parts, false))
	}
	return tc.count(b.String()) + messageOverhead
}

// HistoryTrim is what chat.history removed so far.
type HistoryTrim struct {
	Messages int `json:"messages"`
	Turns    int `json:"turns"`
	Rounds   int `json:"rounds"`
	Tokens   int `json:"tokens"`
}

// tokens returns the cached per-message counts, counting new messages.
// The cache follows the history: appends add to its tail, rollbacks cut
// it, trimming drops the same messages from both.
func (c *Chat) tokens() []int {
	if len(c.counts) > len(c.history) {
		c.counts = c.counts[:len(c.history)]
	}
	for i := len(c.counts); i < len(c.history); i++ {
		c.counts = append(c.counts, c.counter.message(c.history[i]))
	}
	return c.counts
}

// HistoryTokens is the estimated token count of the history.
func (c *Chat) HistoryTokens() int {
	total := 0
	for _, n := range c.tokens() {
		total += n
	}
	return total
}

// trimHistory applies chat.history before a model call. turnStart is the
// index of the current turn's user message; the new index is returned.
func (c *Chat) trimHistory(turnStart int) int {
	budget := c.opts.History
	if budget.MaxTokens <= 0 && budget.MaxTurns <= 0 {
		return turnStart
	}
	counts := c.tokens()
	total := 0
	for _, n := range counts {
		total += n
	}
	turns := 1
	for _, m := range c.history[:turnStart] {
		if m.Role == RoleUser {
			turns++
		}
	}
	over := func() bool {
		return (budget.MaxTokens > 0 && total > budget.MaxTokens) || (budget.MaxTurns > 0 && turns > budget.MaxTurns)
	}
	cut := 0 // messages [0, cut) go
	// Earlier turns, whole: a turn ends where the next user message starts.
	for cut < turnStart && over() {
		end := cut + 1
		for end < turnStart && c.history[end].Role != RoleUser {
			end++
		}
		for _, n := range counts[cut:end] {
			total -= n
		}
		turns--
		c.stats.HistoryTrimmed.Turns++
		cut = end
	}
	// The current turn's rounds, oldest first, never the latest: a round is
	// an assistant message and the tool message answering it.
	type span struct{ from, to int }
	var rounds []span
	for i := turnStart + 1; i < len(c.history); {
		end := i + 1
		if end < len(c.history) && c.history[end].Role == RoleTool {
			end++
		}
		rounds = append(rounds, span{i, end})
		i = end
	}
	var drop []span
	for len(rounds) > 1 && budget.MaxTokens > 0 && total > budget.MaxTokens {
		r := rounds[0]
		rounds = rounds[1:]
		for _, n := range counts[r.from:r.to] {
			total -= n
		}
		drop = append(drop, r)
		c.stats.HistoryTrimmed.Rounds++
	}
	if cut == 0 && len(drop) == 0 {
		return turnStart
	}
	dropped := 0
	var h []Message
	var hc []int
	for i := range c.history {
		gone := i < cut
		for _, r := range drop {
			if i >= r.from && i < r.to {
				gone = true
			}
		}
		if gone {
			dropped++
			c.stats.HistoryTrimmed.Tokens += counts[i]
			continue
		}
		h = append(h, c.history[i])
		hc = append(hc, counts[i])
	}
	c.stats.HistoryTrimmed.Messages += dropped
	c.opts.Logger.Debug("history trimmed", "messages", dropped, "tokens_left", total)
	c.history, c.counts = h, hc
	return turnStart - cut
}

func (t HistoryTrim) String() string {
	return fmt.Sprintf("%d messages (%d earlier turns, %d rounds of the current turn, ~%d tokens)", t.Messages, t.Turns, t.Rounds, t.Tokens)
}
