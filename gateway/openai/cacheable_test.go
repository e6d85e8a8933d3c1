package openai

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChatAnswerHasToolCalls(t *testing.T) {
	cases := []struct {
		name string
		body string
		want bool
	}{
		{"content", `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi","refusal":null},"finish_reason":"stop"}]}`, false},
		{"tool calls", `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`, true},
		{"tool calls in the second choice", `{"choices":[{"index":0,"message":{"role":"assistant","content":"a"}},{"index":1,"message":{"role":"assistant","tool_calls":[{"id":"a"}]}}]}`, true},
		{"an empty tool_calls", `{"choices":[{"index":0,"message":{"role":"assistant","content":"a","tool_calls":[]}}]}`, false},
		{"tool_calls null", `{"choices":[{"index":0,"message":{"role":"assistant","content":"a","tool_calls":null}}]}`, false},
		{"a function_call", `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"function_call":{"name":"f","arguments":"{}"}}}]}`, true},
		{"function_call null", `{"choices":[{"index":0,"message":{"role":"assistant","content":"a","function_call":null}}]}`, false},
		{"a text completion", `{"object":"text_completion","choices":[{"index":0,"text":"tool_calls"}]}`, false},
		{"not JSON", `{"choices":[{"message":{"tool_calls":[{}]}`, false},
		{"empty", ``, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, ChatAnswerHasToolCalls([]byte(tc.body)))
		})
	}
}

func TestLastUserTextAndUserTurns(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		text  string
		turns int
	}{
		{"one turn", keyBase, "hi", 1},
		{"the last user message, parts joined", chatMessages(`[{"role":"system","content":"be brief"},{"role":"user","content":"first"},` +
			`{"role":"assistant","content":"ok"},{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}},{"type":"text","text":"at this"}]},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"42"}]`),
			"look\nat this", 2},
		{"no user message", chatMessages(`[{"role":"system","content":"s"}]`), "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseChat([]byte(tc.body))
			require.NoError(t, err)
			assert.Equal(t, tc.text, LastUserText(req))
			assert.Equal(t, tc.turns, UserTurns(req))
		})
	}
}
