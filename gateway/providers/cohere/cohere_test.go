package cohere_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/all"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// testKey is the provider credential of every Target; no error may ever show it.
const testKey = "sk-test-SECRET-9f8e7d6c5b4a"

// served is Cohere's adapter as the default set serves it.
func served(t *testing.T) providers.Provider {
	t.Helper()
	return providertest.Served(t, all.Default(), "cohere")
}

func chatCall(body string) providers.Call {
	return providers.Call{Endpoint: providers.EndpointChat, Model: "gpt-4o", Body: json.RawMessage(body)}
}

// noKey fails when err's message, or its provider error's body, shows the credential.
func noKey(t *testing.T, err error) {
	t.Helper()
	providertest.NoSecret(t, err, testKey, func(up *providers.UpstreamError) []byte { return up.Body })
}

func rerankCall(body string) providers.Call {
	return providers.Call{Endpoint: providers.EndpointRerank, Body: json.RawMessage(body)}
}

func reranker(t *testing.T) providers.Reranker {
	t.Helper()
	r, ok := served(t).(providers.Reranker)
	require.True(t, ok)
	return r
}

func TestCohereRerank(t *testing.T) {
	cases := []struct {
		name     string
		body     string
		wantSent string
		check    func(t *testing.T, answer map[string]any)
	}{
		{
			name: "the provider's own object",
			body: `{"model":"rerank-v3.5","query":"capital of the United States","top_n":2,
				"documents":["Carson City is the capital city of Nevada.","Washington, D.C. is the capital of the United States.","Capital punishment exists."]}`,
			wantSent: `{"model":"rerank-v3.5","query":"capital of the United States","top_n":2,
				"documents":["Carson City is the capital city of Nevada.","Washington, D.C. is the capital of the United States.","Capital punishment exists."]}`,
			check: func(t *testing.T, answer map[string]any) {
				results := answer["results"].([]any)
				require.Len(t, results, 2)
				first := results[0].(map[string]any)
				assert.Equal(t, float64(1), first["index"], "best first")
				assert.NotContains(t, first, "document")
				assert.Contains(t, answer, "id")
				meta := answer["meta"].(map[string]any)
				assert.Equal(t, map[string]any{"search_units": float64(1)}, meta["billed_units"])
			},
		},
		{
			name: "object documents, return_documents and v1 fields",
			body: `{"model":"rerank-v3.5","query":"france capital","return_documents":true,"max_chunks_per_doc":10,"max_tokens_per_doc":512,
				"documents":[{"text":"Berlin is in Germany."},"Paris is the capital of France.",{"title":"no text field","year":2024}]}`,
			wantSent: `{"model":"rerank-v3.5","query":"france capital","max_tokens_per_doc":512,
				"documents":["Berlin is in Germany.","Paris is the capital of France.","{\"title\":\"no text field\",\"year\":2024}"]}`,
			check: func(t *testing.T, answer map[string]any) {
				results := answer["results"].([]any)
				require.Len(t, results, 3)
				first := results[0].(map[string]any)
				assert.Equal(t, float64(1), first["index"])
				assert.Equal(t, map[string]any{"text": "Paris is the capital of France."}, first["document"], "documents come back as v1 gave them")
				for _, r := range results {
					assert.Contains(t, r.(map[string]any), "relevance_score")
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewCohere(t)
			resp, err := reranker(t).Rerank(context.Background(), providers.Target{Provider: "cohere", BaseURL: srv.URL, APIKey: testKey}, rerankCall(tc.body))
			require.NoError(t, err)
			got := srv.LastRequest()
			assert.Equal(t, "/v2/rerank", got.Path)
			assert.Equal(t, "Bearer "+testKey, got.Header.Get("Authorization"))
			assert.JSONEq(t, tc.wantSent, string(got.Body))
			var answer map[string]any
			require.NoError(t, json.Unmarshal(resp.Body, &answer))
			tc.check(t, answer)
			assert.Equal(t, providers.Usage{}, resp.Usage, "search units are not tokens")
		})
	}
}

func TestCohereRerankUsageAndModel(t *testing.T) {
	srv := providertest.NewCohere(t)
	raw := `{"id":"x","results":[{"index":0,"relevance_score":0.9}],"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1,"input_tokens":12,"output_tokens":0}}}`
	srv.Script(providertest.Answer{Body: raw})
	call := rerankCall(`{"model":"rerank-english-v3.0","query":"q","documents":["a"]}`)
	call.Model = "rerank-v3.5"
	resp, err := reranker(t).Rerank(context.Background(), providers.Target{Provider: "cohere", BaseURL: srv.URL + "/", APIKey: testKey}, call)
	require.NoError(t, err)
	assert.Equal(t, raw, string(resp.Body), "the answer is Cohere's, unchanged")
	assert.Equal(t, providers.Usage{PromptTokens: 12, TotalTokens: 12}, resp.Usage)
	assert.Equal(t, "rerank-v3.5", srv.LastRequest().JSON()["model"], "the call's model, after overrides")
}

func TestCohereRerankErrors(t *testing.T) {
	t.Run("wrong key", func(t *testing.T) {
		srv := providertest.NewCohere(t)
		srv.RequireKey("the-right-one")
		_, err := reranker(t).Rerank(context.Background(), providers.Target{Provider: "cohere", BaseURL: srv.URL, APIKey: testKey},
			rerankCall(`{"model":"rerank-v3.5","query":"q","documents":["a"]}`))
		var up *providers.UpstreamError
		require.ErrorAs(t, err, &up)
		assert.Equal(t, http.StatusUnauthorized, up.Status)
		assert.Equal(t, "cohere", up.Provider)
		e := providertest.ErrorFields(t, up.Body)
		assert.Equal(t, "cohere answered 401: invalid api token", e["message"], "Cohere's own shape is wrapped, naming the provider")
		assert.Equal(t, providers.ProviderErrorType, e["type"])
		noKey(t, err)
	})
	t.Run("429 with Retry-After", func(t *testing.T) {
		srv := providertest.NewCohere(t)
		srv.Script(providertest.Answer{Status: 429, Header: http.Header{"Retry-After": {"3"}}, Body: `{"id":"e","message":"You are using a Trial key, which is limited to 10 API calls / minute."}`})
		_, err := reranker(t).Rerank(context.Background(), providers.Target{Provider: "cohere", BaseURL: srv.URL, APIKey: testKey},
			rerankCall(`{"model":"rerank-v3.5","query":"q","documents":["a"]}`))
		var up *providers.UpstreamError
		require.ErrorAs(t, err, &up)
		assert.Equal(t, 429, up.Status)
		assert.Equal(t, "3s", up.RetryAfter.String())
		assert.Equal(t, "cohere answered 429: You are using a Trial key, which is limited to 10 API calls / minute.", providertest.ErrorFields(t, up.Body)["message"])
	})
	t.Run("a document that is neither a string nor an object", func(t *testing.T) {
		srv := providertest.NewCohere(t)
		_, err := reranker(t).Rerank(context.Background(), providers.Target{Provider: "cohere", BaseURL: srv.URL, APIKey: testKey},
			rerankCall(`{"model":"rerank-v3.5","query":"q","documents":["a",7]}`))
		var de *domain.Error
		require.ErrorAs(t, err, &de)
		assert.Equal(t, "documents[1]", de.Param)
		assert.Empty(t, srv.Requests(), "nothing is sent")
	})
	t.Run("connection refused", func(t *testing.T) {
		srv := providertest.NewCohere(t)
		base := srv.URL
		srv.Close()
		_, err := reranker(t).Rerank(context.Background(), providers.Target{Provider: "cohere", BaseURL: base, APIKey: testKey},
			rerankCall(`{"model":"rerank-v3.5","query":"q","documents":["a"]}`))
		var ce *providers.ConnectionError
		require.ErrorAs(t, err, &ce)
		noKey(t, err)
	})
}

func TestCohereDefaultBaseURL(t *testing.T) {
	srv := providertest.NewCohere(t)
	to, err := url.Parse(srv.URL)
	require.NoError(t, err)
	rw := &providertest.Rewrite{To: to}
	_, err = reranker(t).Rerank(context.Background(), providers.Target{Provider: "cohere", APIKey: testKey, Client: &http.Client{Transport: rw}},
		rerankCall(`{"model":"rerank-v3.5","query":"q","documents":["a"]}`))
	require.NoError(t, err)
	assert.Equal(t, "https://api.cohere.com/v2/rerank", rw.Last())

	_, err = served(t).Chat(context.Background(), providers.Target{Provider: "cohere", APIKey: testKey, Client: &http.Client{Transport: rw}},
		chatCall(`{"model":"command-a-03-2025","messages":[{"role":"user","content":"hi"}]}`))
	require.NoError(t, err)
	assert.Equal(t, "https://api.cohere.com/compatibility/v1/chat/completions", rw.Last())
}

// TestCohereCompatibility: chat and embeddings go through Cohere's Compatibility API, which
// refuses stream_options, so none is sent, even one the client asked for.
func TestCohereCompatibility(t *testing.T) {
	srv := providertest.NewCohere(t)
	target := providers.Target{Provider: "cohere", BaseURL: srv.URL, APIKey: testKey}
	p := served(t)

	resp, err := p.Chat(context.Background(), target, chatCall(`{"model":"command-a-03-2025","messages":[{"role":"user","content":"hi there"}]}`))
	require.NoError(t, err)
	assert.Equal(t, "/compatibility/v1/chat/completions", srv.LastRequest().Path)
	assert.Equal(t, 2, resp.Usage.PromptTokens)

	call := chatCall(`{"model":"command-a-03-2025","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	call.Stream = true
	s, err := p.(providers.ChatStreamer).ChatStream(context.Background(), target, call)
	require.NoError(t, err)
	defer s.Close()
	chunks, err := providertest.Drain(t, s)
	require.NoError(t, err, "the stream ends with io.EOF")
	assert.Equal(t, providertest.StreamText(5), providertest.Content(chunks))
	assert.NotContains(t, srv.LastRequest().JSON(), "stream_options")

	resp, err = p.(providers.Embedder).Embed(context.Background(), target, providers.Call{Endpoint: providers.EndpointEmbed,
		Body: json.RawMessage(`{"model":"embed-v4.0","input":"hello","encoding_format":"float"}`)})
	require.NoError(t, err)
	assert.Equal(t, "/compatibility/v1/embeddings", srv.LastRequest().Path)
	assert.Equal(t, 1, resp.Usage.PromptTokens)
}
