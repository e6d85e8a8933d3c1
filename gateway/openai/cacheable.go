package openai

import (
	"encoding/json"
)

// What the answer cache asks of a request and of an answer before it keeps one. A request's
// n and temperature are ChatRequest.N and Temperature (CompletionRequest.N and Temperature).

// ChatAnswerHasToolCalls reports whether a chat.completion answer calls a tool: a choice's
// message with a non-empty tool_calls or a function_call. A body that is not a JSON object
// has none.
func ChatAnswerHasToolCalls(body []byte) bool {
	if kindOf(body) != kindObject || !json.Valid(body) {
		return false
	}
	choices, ok := TopMember(body, "choices")
	if !ok || kindOf(choices) != kindArray {
		return false
	}
	for _, c := range elements(choices) {
		msg, ok := TopMember(c, "message")
		if !ok || kindOf(msg) != kindObject {
			continue
		}
		if calls, ok := TopMember(msg, "tool_calls"); ok && kindOf(calls) == kindArray && len(elements(calls)) > 0 {
			return true
		}
		if fn, ok := TopMember(msg, "function_call"); ok && kindOf(fn) == kindObject {
			return true
		}
	}
	return false
}

// LastUserText is the text of the request's last user message: its string content, or its
// text parts joined by "\n" (Message.Text); "" when it has no user message.
func LastUserText(req *ChatRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == RoleUser {
			return req.Messages[i].Text
		}
	}
	return ""
}

// UserTurns counts the request's user messages.
func UserTurns(req *ChatRequest) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role == RoleUser {
			n++
		}
	}
	return n
}
