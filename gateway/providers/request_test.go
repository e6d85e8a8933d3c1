package providers_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/all"
	"github.com/causeway/causeway/gateway/providers/anthropic"
	"github.com/causeway/causeway/gateway/providers/gemini"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// parsedChat is a call as the gateway builds it: the body parsed once, carried with its bytes.
func parsedChat(t *testing.T, body string) providers.Call {
	t.Helper()
	req, err := openai.ParseChat([]byte(body))
	require.NoError(t, err)
	return providers.Call{Endpoint: providers.EndpointChat, Model: req.Model, Body: req.Raw, Chat: req, Stream: req.Stream}
}

func TestCallWithOverrides(t *testing.T) {
	const body = "{\"model\":\"gpt-4o\", \"x_vendor\" : [1,2.50],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
	t.Run("a parsed request: the model follows, the body changes only where overridden", func(t *testing.T) {
		call := parsedChat(t, body)
		got, err := call.WithOverrides(map[string]any{"model": "claude-sonnet-4-5", "temperature": 0.2})
		require.NoError(t, err)
		assert.Equal(t, "claude-sonnet-4-5", got.Model)
		assert.Equal(t, "claude-sonnet-4-5", got.Chat.Model)
		require.NotNil(t, got.Chat.Temperature)
		assert.Equal(t, 0.2, *got.Chat.Temperature)
		assert.Equal(t, "{\"model\":\"claude-sonnet-4-5\", \"x_vendor\" : [1,2.50],\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":0.2}", string(got.Body))
		assert.Equal(t, []byte(got.Body), []byte(got.Chat.Raw))
		assert.Equal(t, "gpt-4o", call.Model, "the call overridden is left as it was")
		assert.Equal(t, body, string(call.Body))
	})
	t.Run("without a model override the call's model stays", func(t *testing.T) {
		call := parsedChat(t, body)
		call.Model = "routed-model"
		got, err := call.WithOverrides(map[string]any{"max_tokens": 5})
		require.NoError(t, err)
		assert.Equal(t, "routed-model", got.Model)
		assert.Equal(t, 5, got.Chat.MaxTokens)
	})
	t.Run("each endpoint's request", func(t *testing.T) {
		emb, err := openai.ParseEmbedding([]byte(`{"model":"e","input":"a"}`))
		require.NoError(t, err)
		got, err := providers.Call{Endpoint: providers.EndpointEmbed, Model: "e", Body: emb.Raw, Embedding: emb}.WithOverrides(map[string]any{"model": "e2"})
		require.NoError(t, err)
		assert.Equal(t, "e2", got.Model)
		assert.Equal(t, `{"model":"e2","input":"a"}`, string(got.Body))
		assert.Equal(t, "e2", got.Embedding.Model)

		cmp, err := openai.ParseCompletion([]byte(`{"model":"c","prompt":"a"}`))
		require.NoError(t, err)
		got, err = providers.Call{Endpoint: providers.EndpointCompletion, Model: "c", Body: cmp.Raw, Completion: cmp}.WithOverrides(map[string]any{"max_tokens": 3})
		require.NoError(t, err)
		assert.Equal(t, 3, got.Completion.MaxTokens)
		assert.Equal(t, `{"model":"c","prompt":"a","max_tokens":3}`, string(got.Body))

		rr, err := openai.ParseRerank([]byte(`{"model":"r","query":"q","documents":["a"]}`))
		require.NoError(t, err)
		got, err = providers.Call{Endpoint: providers.EndpointRerank, Model: "r", Body: rr.Raw, Rerank: rr}.WithOverrides(map[string]any{"model": "r2"})
		require.NoError(t, err)
		assert.Equal(t, "r2", got.Model)
		assert.Equal(t, "r2", got.Rerank.Model)
	})
	t.Run("a call of bytes alone, as a pass-through is", func(t *testing.T) {
		call := providers.Call{Endpoint: providers.EndpointPassThrough, Path: "/responses", Body: json.RawMessage(`{"model":"gpt-4o","input":"hi"}`)}
		got, err := call.WithOverrides(map[string]any{"model": "gpt-4.1"})
		require.NoError(t, err)
		assert.Equal(t, "gpt-4.1", got.Model)
		assert.Equal(t, `{"model":"gpt-4.1","input":"hi"}`, string(got.Body))

		get := providers.Call{Endpoint: providers.EndpointPassThrough, Path: "/models"}
		got, err = get.WithOverrides(map[string]any{"model": "gpt-4.1", "temperature": 1})
		require.NoError(t, err, "a call without a body has nothing to override")
		assert.Empty(t, got.Body)
		assert.Equal(t, "gpt-4.1", got.Model)

		_, err = providers.Call{Body: json.RawMessage(`[1]`)}.WithOverrides(map[string]any{"a": 1})
		var de *domain.Error
		require.ErrorAs(t, err, &de)
		assert.Equal(t, domain.CodeInvalid, de.Code)
	})
	t.Run("a value the request's rules refuse", func(t *testing.T) {
		_, err := parsedChat(t, body).WithOverrides(map[string]any{"temperature": 3})
		var de *domain.Error
		require.ErrorAs(t, err, &de)
		assert.Equal(t, domain.CodeInvalid, de.Code)
		assert.Equal(t, "override_params.temperature", de.Param)
	})
}

func anthropicTarget(s *providertest.AnthropicServer) providers.Target {
	return providers.Target{Provider: "anthropic", BaseURL: s.BaseURL(), APIKey: "sk-ant-api03-standin-secret-0123456789"}
}

func geminiTarget(s *providertest.GeminiServer) providers.Target {
	return providers.Target{Provider: "google", BaseURL: s.BaseURL(), APIKey: "AIzaSyStandInSecret0123456789abcdefghi"}
}

func reranker(t *testing.T) providers.Reranker {
	t.Helper()
	r, ok := providertest.Served(t, all.Default(), "cohere").(providers.Reranker)
	require.True(t, ok)
	return r
}

// TestTranslatingAdaptersReadTheModel: an adapter that translates builds its provider's request
// from the parsed request the call carries; it does not read Body again.
func TestTranslatingAdaptersReadTheModel(t *testing.T) {
	const body = `{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}],"temperature":0.3,"stop":"END","max_tokens":64}`
	call := func(t *testing.T, model string) providers.Call {
		c := parsedChat(t, body)
		c.Model = model
		// Bytes that say something else: only the model may be read.
		c.Body = json.RawMessage(`{"model":"not-this","messages":[{"role":"user","content":"not this"}]}`)
		return c
	}
	t.Run("anthropic", func(t *testing.T) {
		s := providertest.NewAnthropic(t)
		_, err := anthropic.New(nil).Chat(context.Background(), anthropicTarget(s), call(t, "claude-sonnet-4-5"))
		require.NoError(t, err)
		got := s.LastRequest().JSON()
		assert.Equal(t, "claude-sonnet-4-5", got["model"])
		assert.Equal(t, []any{map[string]any{"type": "text", "text": "Be brief."}}, got["system"])
		assert.Equal(t, []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Hi"}}}}, got["messages"])
		assert.Equal(t, 0.3, got["temperature"])
		assert.Equal(t, []any{"END"}, got["stop_sequences"])
		assert.Equal(t, 64.0, got["max_tokens"])
	})
	t.Run("google", func(t *testing.T) {
		s := providertest.NewGemini(t)
		_, err := gemini.New(nil).Chat(context.Background(), geminiTarget(s), call(t, "gemini-2.0-flash"))
		require.NoError(t, err)
		req := s.LastRequest()
		assert.Equal(t, "/v1beta/models/gemini-2.0-flash:generateContent", req.Path)
		got := req.JSON()
		assert.Equal(t, map[string]any{"parts": []any{map[string]any{"text": "Be brief."}}}, got["systemInstruction"])
		assert.Equal(t, []any{map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Hi"}}}}, got["contents"])
		assert.Equal(t, map[string]any{"temperature": 0.3, "stopSequences": []any{"END"}, "maxOutputTokens": 64.0}, got["generationConfig"])
	})
	t.Run("cohere rerank", func(t *testing.T) {
		srv := providertest.NewCohere(t)
		rr, err := openai.ParseRerank([]byte(`{"model":"rerank-v3.5","query":"q","documents":["a",{"text":"b"}],"top_n":1,"priority":2}`))
		require.NoError(t, err)
		c := providers.Call{Endpoint: providers.EndpointRerank, Model: rr.Model, Rerank: rr, Body: json.RawMessage(`{}`)}
		_, err = reranker(t).Rerank(context.Background(), providers.Target{Provider: "cohere", BaseURL: srv.URL, APIKey: "sk-test-SECRET-9f8e7d6c5b4a"}, c)
		require.NoError(t, err)
		assert.JSONEq(t, `{"model":"rerank-v3.5","query":"q","documents":["a","b"],"top_n":1,"priority":2}`, string(srv.LastRequest().Body))
	})
}
