package openaicompat_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// OpenRouter reports cache writes in prompt_tokens_details.cache_write_tokens, whole and in a
// stream's usage chunk; OpenAI itself reports none.
func TestOpenAICompatibleCacheWrites(t *testing.T) {
	const usage = `"usage":{"prompt_tokens":194,"completion_tokens":2,"total_tokens":196,` +
		`"prompt_tokens_details":{"cached_tokens":40,"cache_write_tokens":100}}`
	want := providers.Usage{PromptTokens: 194, CompletionTokens: 2, TotalTokens: 196, CachedTokens: 40, CacheWriteTokens: 100}

	t.Run("whole answer", func(t *testing.T) {
		srv := providertest.NewOpenAI(t)
		srv.Script(providertest.Answer{Body: `{"id":"gen-1","object":"chat.completion","model":"anthropic/claude-sonnet-4.5",` +
			`"choices":[{"index":0,"message":{"role":"assistant","content":"Hi"},"finish_reason":"stop"}],` + usage + `}`})
		target := providers.Target{Provider: "openrouter", BaseURL: srv.BaseURL(), APIKey: testKey}
		resp, err := adapter(t, "openrouter").Chat(context.Background(), target, chatCall(chatBody))
		require.NoError(t, err)
		assert.Equal(t, want, resp.Usage)
	})

	t.Run("stream", func(t *testing.T) {
		srv := providertest.NewOpenAI(t)
		srv.Script(providertest.Answer{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: strings.Join([]string{
			`data: {"id":"gen-2","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
			`data: {"id":"gen-2","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`data: {"id":"gen-2","object":"chat.completion.chunk","model":"m","choices":[],` + usage + `}`,
			`data: [DONE]`,
		}, "\n\n") + "\n\n"})
		target := providers.Target{Provider: "openrouter", BaseURL: srv.BaseURL(), APIKey: testKey}
		call := chatCall(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
		call.Stream = true
		st, err := adapter(t, "openrouter").(providers.ChatStreamer).ChatStream(context.Background(), target, call)
		require.NoError(t, err)
		defer st.Close()
		_, _ = drain(t, st)
		assert.Equal(t, want, st.Usage())
	})

	t.Run("openai reports none", func(t *testing.T) {
		srv := providertest.NewOpenAI(t)
		srv.SetUsageDetails(3, 2)
		target := providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}
		resp, err := adapter(t, "openai").Chat(context.Background(), target, chatCall(chatBody))
		require.NoError(t, err)
		assert.Equal(t, 3, resp.Usage.CachedTokens)
		assert.Zero(t, resp.Usage.CacheWriteTokens)
	})
}
