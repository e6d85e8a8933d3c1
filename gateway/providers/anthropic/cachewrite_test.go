package anthropic_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/anthropic"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// Anthropic's cache writes (cache_creation_input_tokens) reach Usage.CacheWriteTokens, whole
// and streamed, and stay part of prompt_tokens; the usage answered to the client keeps
// OpenAI's shape, which has no field for them.
func TestAnthropicCacheWrites(t *testing.T) {
	t.Run("whole answer", func(t *testing.T) {
		s := providertest.NewAnthropic(t)
		s.SetCacheUsage(30, 120)
		resp, err := anthropic.New(nil).Chat(context.Background(), standInTarget(s),
			chatCall(`{"messages":[{"role":"user","content":"Say hello to me"}]}`))
		require.NoError(t, err)
		// 4 words of input + 30 read from the cache + 120 written to it.
		assert.Equal(t, providers.Usage{PromptTokens: 154, CompletionTokens: 4, TotalTokens: 158, CachedTokens: 30,
			CacheWriteTokens: 120}, resp.Usage)
		assert.Equal(t, map[string]any{"prompt_tokens": 154.0, "completion_tokens": 4.0, "total_tokens": 158.0,
			"prompt_tokens_details": map[string]any{"cached_tokens": 30.0}}, providertest.Decode(t, resp.Body)["usage"])
	})

	t.Run("stream: message_start's counts", func(t *testing.T) {
		s := providertest.NewAnthropic(t)
		s.SetCacheUsage(2, 9)
		s.SetStream(providertest.StreamPlan{Chunks: 4})
		call := chatCall(`{"messages":[{"role":"user","content":"Say hello"}],"stream":true,"stream_options":{"include_usage":true}}`)
		call.Stream = true
		st, err := anthropic.New(nil).ChatStream(context.Background(), standInTarget(s), call)
		require.NoError(t, err)
		defer st.Close()
		chunks, err := providertest.Drain(t, st)
		require.NoError(t, err)
		// 2 words of input + 2 read + 9 written; 4 deltas out.
		assert.Equal(t, providers.Usage{PromptTokens: 13, CompletionTokens: 4, TotalTokens: 17, CachedTokens: 2,
			CacheWriteTokens: 9}, st.Usage())
		assert.Equal(t, map[string]any{"prompt_tokens": 13.0, "completion_tokens": 4.0, "total_tokens": 17.0,
			"prompt_tokens_details": map[string]any{"cached_tokens": 2.0}}, chunks[len(chunks)-1]["usage"])
	})

	t.Run("stream: message_delta's counts replace message_start's", func(t *testing.T) {
		s := providertest.NewAnthropic(t)
		ev := providertest.AnthropicEvent
		s.Script(providertest.Answer{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: strings.Join([]string{
			ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_c", "model": "claude-x",
				"usage": map[string]any{"input_tokens": 3, "output_tokens": 1, "cache_creation_input_tokens": 50}}}),
			ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}}),
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": "Hi"}}),
			ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}),
			ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"},
				"usage": map[string]any{"output_tokens": 6, "cache_creation_input_tokens": 70, "cache_read_input_tokens": 8}}),
			ev("message_stop", map[string]any{"type": "message_stop"}),
		}, "")})
		call := chatCall(`{"messages":[{"role":"user","content":"Hi"}],"stream":true}`)
		call.Stream = true
		st, err := anthropic.New(nil).ChatStream(context.Background(), standInTarget(s), call)
		require.NoError(t, err)
		defer st.Close()
		_, err = providertest.Drain(t, st)
		require.NoError(t, err)
		assert.Equal(t, providers.Usage{PromptTokens: 81, CompletionTokens: 6, TotalTokens: 87, CachedTokens: 8,
			CacheWriteTokens: 70}, st.Usage())
	})
}
