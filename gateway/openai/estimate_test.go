package openai

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEstimateTokens(t *testing.T) {
	cases := []struct {
		name string
		body string
		want int
	}{
		// 12 bytes → 3 tokens, + 4 for the message, + 3 for the reply.
		{"one message", chatMessages(`[{"role":"user","content":"hello world!"}]`), 3 + 4 + 3},
		// 13 bytes round up to 4 tokens.
		{"rounds up", chatMessages(`[{"role":"user","content":"hello world!!"}]`), 4 + 4 + 3},
		{"empty content", chatMessages(`[{"role":"user","content":""}]`), 0 + 4 + 3},
		// "ab" + "cd" from text parts, joined by "\n": 5 bytes; the image is not counted.
		{"text parts only", chatMessages(`[{"role":"user","content":[{"type":"text","text":"ab"},{"type":"image_url","image_url":{"url":"https://example.com/` + strings.Repeat("i", 400) + `"}},{"type":"text","text":"cd"}]}]`), 2 + 4 + 3},
		// name "bob" (3) + content "1234" (4) = 7 bytes → 2 tokens, two messages.
		{"names count", chatMessages(`[{"role":"system","content":"1234"},{"role":"user","name":"bob","content":""}]`), 2 + 8 + 3},
		// tool call: name "f" + arguments "{}" = 3 bytes → 1 token.
		{"tool calls count", chatMessages(`[{"role":"assistant","content":null,"tool_calls":[{"id":"1","type":"function","function":{"name":"f","arguments":"{}"}}]}]`), 1 + 4 + 3},
		// the tool definition's 43 bytes and the message's "hi", 45 bytes → 12 tokens.
		{"tool definitions count", chat(`"tools":[{"type":"function","function":{"name":"f"}}]`), 12 + 4 + 3},
		{"CJK counts bytes", chatMessages(`[{"role":"user","content":"你好世界"}]`), 3 + 4 + 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := ParseChat([]byte(tc.body))
			require.NoError(t, err)
			assert.Equal(t, tc.want, EstimateTokens(req))
		})
	}
}

func TestEstimateOtherEndpoints(t *testing.T) {
	c, err := ParseCompletion([]byte(`{"model":"m","prompt":["abcd","efgh"]}`))
	require.NoError(t, err)
	assert.Equal(t, 2, EstimateCompletionTokens(c))

	c, err = ParseCompletion([]byte(`{"model":"m","prompt":[[1,2,3],[4,5]]}`))
	require.NoError(t, err)
	assert.Equal(t, 5, EstimateCompletionTokens(c), "token ids count exactly")

	e, err := ParseEmbedding([]byte(`{"model":"m","input":"abcdefgh"}`))
	require.NoError(t, err)
	assert.Equal(t, 2, EstimateEmbeddingTokens(e))

	e, err = ParseEmbedding([]byte(`{"model":"m","input":[7,8,9]}`))
	require.NoError(t, err)
	assert.Equal(t, 3, EstimateEmbeddingTokens(e))

	r, err := ParseRerank([]byte(`{"model":"m","query":"abcd","documents":["efgh","ijkl"]}`))
	require.NoError(t, err)
	assert.Equal(t, 4, EstimateRerankTokens(r), "the query is read with each document")
}
