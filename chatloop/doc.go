// Package chatloop drives an LLM through the hub.
//
// The chat is an ordinary MCP client of the hub: it connects over go-sdk's
// in-memory transport (see [Dial]) and sees exactly what Claude Desktop or
// any other client sees, including the search_tools and call_tool
// meta-tools and notifications/tools/list_changed. Nothing here reaches
// into the hub's internals; that keeps the chat an honest end-to-end test of
// discovery.
//
// The model of one turn ([Chat.Send]):
//
//  0. With chat.preselect, rank every hub tool against the user's message
//     by embeddings and load the best into the session; they (and the
//     meta-tools, and what the model loads itself) are the turn's tools
//     (preselect.go).
//  1. Read the session's current tools/list (cached until list_changed
//     arrives or a tool ran: a tool call may have loaded tools, and go-sdk's
//     client may hand over a call's result before it has handled the
//     list_changed the hub sent ahead of it).
//  2. Trim the history to chat.history's budget (history.go), resolve the
//     system prompt (explicit, else the model's template rendered with the
//     tools of this call, else the default; template.go), show tool
//     results as chat.tool_result_format says (resultformat.go), and send
//     it all to the provider.
//  3. If the answer has tool calls, decide those that need approval
//     (approve.go), run the rest through the session (in parallel when
//     chat.parallel_tool_calls is true), append the results in call order,
//     and go to 1; tool failures go back to the model as error results,
//     but a failing hub or server makes the rest of the turn answer
//     without tools (degrade.go). Otherwise the text is the final answer,
//     made to match the response schema when there is one (structured.go).
//  4. Give up after chat.max_rounds model calls and say so.
//
// Providers ([Provider]) hide the wire format: OpenAI-compatible chat
// completions (OpenAI, OpenRouter, Ollama's /v1, vLLM, LM Studio) and
// Anthropic messages, both spoken over net/http by small clients of their
// own (openai.go, anthropic.go, wire.go, sse.go). The history
// ([Message]) is provider-neutral so a conversation survives a model switch
// and serialises as the JSON of --json and POST /v1/chat.
package chatloop
