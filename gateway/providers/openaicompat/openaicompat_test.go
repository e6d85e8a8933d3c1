package openaicompat_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/all"
	"github.com/causeway/causeway/gateway/providers/openaicompat"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// testKey is the provider credential of every Target; no error may ever show it.
const testKey = "sk-test-SECRET-9f8e7d6c5b4a"

const chatBody = `{"model":"gpt-4o","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Say hello to the gateway"}]}`

func adapter(t *testing.T, name string) providers.Provider {
	t.Helper()
	return providertest.Served(t, all.Default(), name)
}

func chatCall(body string) providers.Call {
	return providers.Call{Endpoint: providers.EndpointChat, Model: "gpt-4o", Body: json.RawMessage(body)}
}

// noKey fails when err's message, or its provider error's body, shows the credential.
func noKey(t *testing.T, err error) {
	t.Helper()
	providertest.NoSecret(t, err, testKey, func(up *providers.UpstreamError) []byte { return up.Body })
}

// drain reads a stream to its end.
func drain(t *testing.T, s providers.Stream) ([]map[string]any, error) {
	t.Helper()
	var chunks []map[string]any
	for {
		raw, err := s.Next()
		if err != nil {
			return chunks, err
		}
		var c map[string]any
		require.NoError(t, json.Unmarshal(raw, &c), string(raw))
		chunks = append(chunks, c)
	}
}

func contentOf(chunks []map[string]any) string {
	var b strings.Builder
	for _, c := range chunks {
		choices, _ := c["choices"].([]any)
		for _, ch := range choices {
			choice := ch.(map[string]any)
			if delta, ok := choice["delta"].(map[string]any); ok {
				if s, ok := delta["content"].(string); ok {
					b.WriteString(s)
				}
			}
			if s, ok := choice["text"].(string); ok {
				b.WriteString(s)
			}
		}
	}
	return b.String()
}

func TestOpenAICompatibleChat(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	srv.SetUsageDetails(3, 2)
	cases := []struct {
		provider   string
		target     providers.Target
		wantPath   string
		wantQuery  url.Values
		wantAPIKey bool // Azure's api-key header instead of Authorization: Bearer
	}{
		{provider: "openai", target: providers.Target{BaseURL: srv.URL + "/v1"}, wantPath: "/v1/chat/completions"},
		{provider: "groq", target: providers.Target{BaseURL: srv.URL + "/openai/v1/"}, wantPath: "/openai/v1/chat/completions"},
		{provider: "mistral-ai", target: providers.Target{BaseURL: srv.URL + "/v1"}, wantPath: "/v1/chat/completions"},
		{provider: "together-ai", target: providers.Target{BaseURL: srv.URL + "/v1"}, wantPath: "/v1/chat/completions"},
		{provider: "fireworks-ai", target: providers.Target{BaseURL: srv.URL + "/inference/v1"}, wantPath: "/inference/v1/chat/completions"},
		{provider: "deepseek", target: providers.Target{BaseURL: srv.URL + "/v1"}, wantPath: "/v1/chat/completions"},
		{provider: "openrouter", target: providers.Target{BaseURL: srv.URL + "/api/v1"}, wantPath: "/api/v1/chat/completions"},
		{provider: "vllm", target: providers.Target{BaseURL: srv.URL + "/v1"}, wantPath: "/v1/chat/completions"},
		{provider: "ollama", target: providers.Target{BaseURL: srv.URL}, wantPath: "/v1/chat/completions"},
		{provider: "ollama", target: providers.Target{BaseURL: srv.URL + "/v1"}, wantPath: "/v1/chat/completions"},
		{
			provider: "azure-openai",
			target: providers.Target{BaseURL: srv.URL + "/openai", Options: map[string]string{
				providers.OptionAzureResource: "contoso", providers.OptionAzureDeployment: "gpt4o-prod",
				providers.OptionAzureAPIVersion: "2024-06-01"}},
			wantPath: "/openai/deployments/gpt4o-prod/chat/completions", wantQuery: url.Values{"api-version": {"2024-06-01"}},
			wantAPIKey: true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.provider+" "+tc.target.BaseURL, func(t *testing.T) {
			p := adapter(t, tc.provider)
			assert.Equal(t, tc.provider, p.Name())
			tc.target.Provider, tc.target.APIKey = tc.provider, testKey

			resp, err := p.Chat(context.Background(), tc.target, chatCall(chatBody))
			require.NoError(t, err)

			var answer struct {
				Object  string `json:"object"`
				Model   string `json:"model"`
				Choices []struct {
					Message struct{ Role, Content string }
				}
			}
			require.NoError(t, json.Unmarshal(resp.Body, &answer))
			assert.Equal(t, "chat.completion", answer.Object)
			assert.Equal(t, "gpt-4o", answer.Model)
			require.Len(t, answer.Choices, 1)
			assert.Equal(t, providertest.Reply, answer.Choices[0].Message.Content)
			assert.Equal(t, providers.Usage{PromptTokens: 7, CompletionTokens: 4, TotalTokens: 11, CachedTokens: 3, ReasoningTokens: 2}, resp.Usage)
			assert.Equal(t, http.StatusOK, resp.Status)
			assert.Contains(t, resp.Header.Get("Content-Type"), "application/json")
			assert.NotEmpty(t, resp.Header.Get("X-Request-Id"), "the provider's request id comes back")

			got := srv.LastRequest()
			assert.Equal(t, http.MethodPost, got.Method)
			assert.Equal(t, tc.wantPath, got.Path)
			if tc.wantQuery != nil {
				q, err := url.ParseQuery(got.RawQuery)
				require.NoError(t, err)
				assert.Equal(t, tc.wantQuery, q)
			}
			if tc.wantAPIKey {
				assert.Equal(t, testKey, got.Header.Get("Api-Key"))
				assert.Empty(t, got.Header.Get("Authorization"))
			} else {
				assert.Equal(t, "Bearer "+testKey, got.Header.Get("Authorization"))
			}
			assert.Equal(t, "application/json", got.Header.Get("Content-Type"))
			assert.JSONEq(t, chatBody, string(got.Body), "the body goes out as the client sent it")
		})
	}
}

func TestDefaultBaseURLs(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	to, err := url.Parse(srv.URL)
	require.NoError(t, err)
	rw := &providertest.Rewrite{To: to}
	client := &http.Client{Transport: rw}
	cases := []struct {
		provider string
		options  map[string]string
		want     string
	}{
		{"openai", nil, "https://api.openai.com/v1/chat/completions"},
		{"groq", nil, "https://api.groq.com/openai/v1/chat/completions"},
		{"mistral-ai", nil, "https://api.mistral.ai/v1/chat/completions"},
		{"together-ai", nil, "https://api.together.xyz/v1/chat/completions"},
		{"fireworks-ai", nil, "https://api.fireworks.ai/inference/v1/chat/completions"},
		{"deepseek", nil, "https://api.deepseek.com/v1/chat/completions"},
		{"openrouter", nil, "https://openrouter.ai/api/v1/chat/completions"},
		{"azure-openai", map[string]string{providers.OptionAzureResource: "contoso", providers.OptionAzureDeployment: "gpt4o-prod"},
			"https://contoso.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=" + openaicompat.AzureDefaultAPIVersion},
		{"azure-openai", map[string]string{providers.OptionAzureResource: "contoso", providers.OptionAzureAPIVersion: "2025-01-01-preview"},
			"https://contoso.openai.azure.com/openai/deployments/gpt-4o/chat/completions?api-version=2025-01-01-preview"},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			target := providers.Target{Provider: tc.provider, APIKey: testKey, Options: tc.options, Client: client}
			_, err := adapter(t, tc.provider).Chat(context.Background(), target, chatCall(chatBody))
			require.NoError(t, err)
			assert.Equal(t, tc.want, rw.Last())
		})
	}
}

func TestTargetProblemsAreTheClients(t *testing.T) {
	cases := []struct {
		name      string
		provider  string
		target    providers.Target
		wantParam string
	}{
		{"vllm needs a custom host", "vllm", providers.Target{}, "x-gateway-custom-host"},
		{"ollama needs a custom host", "ollama", providers.Target{}, "x-gateway-custom-host"},
		{"azure needs a resource", "azure-openai", providers.Target{Options: map[string]string{providers.OptionAzureDeployment: "d"}}, "x-gateway-azure-resource-name"},
		{"an azure resource cannot name another host", "azure-openai",
			providers.Target{Options: map[string]string{providers.OptionAzureResource: "evil.example/x#", providers.OptionAzureDeployment: "d"}}, "x-gateway-azure-resource-name"},
		{"azure needs a deployment or a model", "azure-openai", providers.Target{Options: map[string]string{providers.OptionAzureResource: "contoso"}}, "x-gateway-azure-deployment-id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.target.Provider, tc.target.APIKey = tc.provider, testKey
			call := chatCall(chatBody)
			if tc.wantParam == "x-gateway-azure-deployment-id" {
				call.Model = ""
				call.Body = json.RawMessage(`{"messages":[{"role":"user","content":"hi"}]}`)
			}
			_, err := adapter(t, tc.provider).Chat(context.Background(), tc.target, call)
			var de *domain.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, domain.CodeInvalid, de.Code)
			assert.Equal(t, tc.wantParam, de.Param)
			noKey(t, err)
		})
	}
}

func TestChatStream(t *testing.T) {
	cases := []struct {
		name          string
		provider      string
		base          string
		body          string
		wantUpstream  map[string]any // stream_options sent upstream; nil: none
		wantUsageLast bool           // the usage-only chunk reaches the client
		wantUsage     providers.Usage
	}{
		{
			name: "usage asked upstream, hidden from a client that did not ask", provider: "openai", base: "/v1",
			body:         chatBody,
			wantUpstream: map[string]any{"include_usage": true},
			wantUsage:    providers.Usage{PromptTokens: 7, CompletionTokens: 5, TotalTokens: 12, CachedTokens: 3, ReasoningTokens: 2},
		},
		{
			name: "usage chunk kept for a client that asked", provider: "openai", base: "/v1",
			body:          `{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Say hello to the gateway"}]}`,
			wantUpstream:  map[string]any{"include_usage": true},
			wantUsageLast: true,
			wantUsage:     providers.Usage{PromptTokens: 5, CompletionTokens: 5, TotalTokens: 10, CachedTokens: 3, ReasoningTokens: 2},
		},
		{
			name: "mistral reports usage unasked: no stream_options added", provider: "mistral-ai", base: "/v1",
			body: chatBody,
		},
		{
			name: "groq through its own base", provider: "groq", base: "/openai/v1",
			body:         chatBody,
			wantUpstream: map[string]any{"include_usage": true},
			wantUsage:    providers.Usage{PromptTokens: 7, CompletionTokens: 5, TotalTokens: 12, CachedTokens: 3, ReasoningTokens: 2},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewOpenAI(t)
			srv.SetUsageDetails(3, 2)
			p := adapter(t, tc.provider).(providers.ChatStreamer)
			call := chatCall(tc.body)
			call.Stream = true
			s, err := p.ChatStream(context.Background(), providers.Target{Provider: tc.provider, BaseURL: srv.URL + tc.base, APIKey: testKey}, call)
			require.NoError(t, err)
			defer s.Close()

			chunks, err := drain(t, s)
			require.ErrorIs(t, err, io.EOF)
			_, again := s.Next()
			assert.ErrorIs(t, again, io.EOF, "the end stays the end")

			want := 1 + 5 + 1 // role, content, finish
			if tc.wantUsageLast {
				want++
			}
			require.Len(t, chunks, want)
			assert.Equal(t, providertest.StreamText(5), contentOf(chunks), "content chunks arrive in order")
			for _, c := range chunks {
				assert.Equal(t, "chat.completion.chunk", c["object"])
			}
			last := chunks[len(chunks)-1]
			if tc.wantUsageLast {
				assert.Empty(t, last["choices"])
				assert.NotNil(t, last["usage"])
			} else {
				assert.NotEmpty(t, last["choices"], "no usage-only chunk the client did not ask for")
			}
			assert.Equal(t, tc.wantUsage, s.Usage())

			sent := srv.LastRequest().JSON()
			assert.Equal(t, true, sent["stream"])
			if tc.wantUpstream == nil {
				assert.NotContains(t, sent, "stream_options")
			} else {
				assert.Equal(t, tc.wantUpstream, sent["stream_options"])
			}
			require.NoError(t, s.Close())
			require.NoError(t, s.Close(), "Close is idempotent")
		})
	}
}

func TestChatStreamToolCalls(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"Weather in Paris?"}],
		"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object",
		"properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"]}}}]}`
	target := providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}
	p := adapter(t, "openai")

	resp, err := p.Chat(context.Background(), target, chatCall(body))
	require.NoError(t, err)
	var whole struct {
		Choices []struct {
			FinishReason string `json:"finish_reason"`
			Message      struct {
				ToolCalls []struct {
					ID, Type string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
		}
	}
	require.NoError(t, json.Unmarshal(resp.Body, &whole))
	require.Len(t, whole.Choices[0].Message.ToolCalls, 1)
	call := whole.Choices[0].Message.ToolCalls[0]
	assert.Equal(t, "tool_calls", whole.Choices[0].FinishReason)
	assert.Equal(t, "get_weather", call.Function.Name)
	assert.JSONEq(t, `{"city":"stand-in","days":1}`, call.Function.Arguments)

	c := chatCall(body)
	c.Stream = true
	s, err := p.(providers.ChatStreamer).ChatStream(context.Background(), target, c)
	require.NoError(t, err)
	defer s.Close()
	chunks, err := drain(t, s)
	require.ErrorIs(t, err, io.EOF)
	var name, args strings.Builder
	for _, ch := range chunks {
		for _, choice := range ch["choices"].([]any) {
			delta := choice.(map[string]any)["delta"].(map[string]any)
			calls, _ := delta["tool_calls"].([]any)
			for _, tcall := range calls {
				fn := tcall.(map[string]any)["function"].(map[string]any)
				if n, ok := fn["name"].(string); ok {
					name.WriteString(n)
				}
				args.WriteString(fn["arguments"].(string))
			}
		}
	}
	assert.Equal(t, "get_weather", name.String())
	assert.JSONEq(t, `{"city":"stand-in","days":1}`, args.String(), "streamed argument fragments join into the arguments")
}

func TestChatStreamFailures(t *testing.T) {
	cases := []struct {
		name       string
		plan       providertest.StreamPlan
		wantChunks int // chunks yielded before the error, the role chunk included
		check      func(t *testing.T, err error)
	}{
		{
			name: "connection dropped mid-stream", plan: providertest.StreamPlan{Chunks: 10, CutAfter: 3}, wantChunks: 4,
			check: func(t *testing.T, err error) {
				var ce *providers.ConnectionError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, "openai", ce.Provider)
			},
		},
		{
			name: "clean end without [DONE]", plan: providertest.StreamPlan{Chunks: 3, OmitDone: true}, wantChunks: 5,
			check: func(t *testing.T, err error) {
				var ce *providers.ConnectionError
				require.ErrorAs(t, err, &ce)
				assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
				assert.Contains(t, err.Error(), "without [DONE]")
			},
		},
		{
			name: "error event mid-stream", plan: providertest.StreamPlan{Chunks: 10, ErrorAfter: 2}, wantChunks: 3,
			check: func(t *testing.T, err error) {
				var up *providers.UpstreamError
				require.ErrorAs(t, err, &up)
				assert.Equal(t, http.StatusBadGateway, up.Status)
				e := providertest.ErrorFields(t, up.Body)
				assert.Equal(t, "server_error", e["type"])
				assert.Contains(t, e["message"], "The server had an error")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewOpenAI(t)
			srv.SetStream(tc.plan)
			call := chatCall(chatBody)
			call.Stream = true
			s, err := adapter(t, "openai").(providers.ChatStreamer).ChatStream(context.Background(),
				providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, call)
			require.NoError(t, err)
			defer s.Close()
			chunks, err := drain(t, s)
			require.Error(t, err)
			assert.NotErrorIs(t, err, io.EOF, "a truncated stream is never a silent end")
			assert.Len(t, chunks, tc.wantChunks)
			tc.check(t, err)
			_, again := s.Next()
			assert.Equal(t, err, again, "the failure is sticky")
			noKey(t, err)
		})
	}
}

// TestStreamStopReachesUpstream: a client that stops reading (Close) or goes away (its
// context) cancels the upstream call within a second.
func TestStreamStopReachesUpstream(t *testing.T) {
	for _, how := range []string{"close", "cancel"} {
		t.Run(how, func(t *testing.T) {
			srv := providertest.NewOpenAI(t)
			srv.SetStream(providertest.StreamPlan{Chunks: 100, Delay: 10 * time.Millisecond})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			call := chatCall(chatBody)
			call.Stream = true
			s, err := adapter(t, "openai").(providers.ChatStreamer).ChatStream(ctx,
				providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, call)
			require.NoError(t, err)
			for range 11 { // the role chunk and 10 content chunks
				_, err := s.Next()
				require.NoError(t, err)
			}
			stopped := time.Now()
			if how == "close" {
				require.NoError(t, s.Close())
			} else {
				cancel()
				_, err := s.Next()
				require.ErrorIs(t, err, context.Canceled)
				var ce *providers.ConnectionError
				assert.False(t, errors.As(err, &ce), "a client that went away is not the provider's failure")
				defer s.Close()
			}
			select {
			case d := <-srv.Disconnects():
				assert.Less(t, d.Chunks, 100)
				assert.Less(t, d.At.Sub(stopped), time.Second)
			case <-time.After(time.Second):
				t.Fatal("the stand-in did not see the client go away within a second")
			}
		})
	}
}

func TestCompletions(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	target := providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}
	p := adapter(t, "openai")
	body := `{"model":"gpt-3.5-turbo-instruct","prompt":"Once upon a time","max_tokens":16}`
	call := providers.Call{Endpoint: providers.EndpointCompletion, Model: "gpt-3.5-turbo-instruct", Body: json.RawMessage(body)}

	resp, err := p.(providers.Completer).Complete(context.Background(), target, call)
	require.NoError(t, err)
	var whole struct {
		Object  string
		Choices []struct{ Text string }
	}
	require.NoError(t, json.Unmarshal(resp.Body, &whole))
	assert.Equal(t, "text_completion", whole.Object)
	assert.Equal(t, providertest.Reply, whole.Choices[0].Text)
	assert.Equal(t, providers.Usage{PromptTokens: 4, CompletionTokens: 4, TotalTokens: 8}, resp.Usage)
	assert.Equal(t, "/v1/completions", srv.LastRequest().Path)

	call.Stream = true
	s, err := p.(providers.CompletionStreamer).CompleteStream(context.Background(), target, call)
	require.NoError(t, err)
	defer s.Close()
	chunks, err := drain(t, s)
	require.ErrorIs(t, err, io.EOF)
	require.Len(t, chunks, 6, "5 pieces and the finish; the usage chunk the client did not ask for is not yielded")
	for _, c := range chunks {
		assert.Equal(t, "text_completion", c["object"])
	}
	assert.Equal(t, providertest.StreamText(5), contentOf(chunks))
	assert.Equal(t, providers.Usage{PromptTokens: 4, CompletionTokens: 5, TotalTokens: 9}, s.Usage())
	assert.Equal(t, map[string]any{"include_usage": true}, srv.LastRequest().JSON()["stream_options"])
}

func TestEmbeddings(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	cases := []struct {
		provider string
		target   providers.Target
		wantPath string
	}{
		{"openai", providers.Target{BaseURL: srv.BaseURL()}, "/v1/embeddings"},
		{"azure-openai", providers.Target{BaseURL: srv.URL + "/openai", Options: map[string]string{providers.OptionAzureDeployment: "embed-small"}},
			"/openai/deployments/embed-small/embeddings"},
		{"ollama", providers.Target{BaseURL: srv.URL}, "/v1/embeddings"},
	}
	for _, tc := range cases {
		t.Run(tc.provider, func(t *testing.T) {
			tc.target.Provider, tc.target.APIKey = tc.provider, testKey
			body := `{"model":"text-embedding-3-small","input":["first text","second text here"],"dimensions":4}`
			resp, err := adapter(t, tc.provider).(providers.Embedder).Embed(context.Background(), tc.target,
				providers.Call{Endpoint: providers.EndpointEmbed, Model: "text-embedding-3-small", Body: json.RawMessage(body)})
			require.NoError(t, err)
			var list struct {
				Object string
				Data   []struct {
					Index     int
					Embedding []float64
				}
			}
			require.NoError(t, json.Unmarshal(resp.Body, &list))
			assert.Equal(t, "list", list.Object)
			require.Len(t, list.Data, 2)
			assert.Len(t, list.Data[1].Embedding, 4)
			assert.Equal(t, providers.Usage{PromptTokens: 5, TotalTokens: 5}, resp.Usage)
			assert.Equal(t, tc.wantPath, srv.LastRequest().Path)
		})
	}
}

func TestPassThrough(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	cases := []struct {
		name, provider, method, path, query, body string
		target                                    providers.Target
		wantPath, wantQuery                       string
	}{
		{name: "GET with a query", provider: "openai", method: http.MethodGet, path: "/files", query: "purpose=batch&limit=2",
			wantPath: "/v1/files", wantQuery: "purpose=batch&limit=2"},
		{name: "POST", provider: "openai", method: http.MethodPost, path: "/images/generations", body: `{"prompt":"a lighthouse"}`,
			wantPath: "/v1/images/generations"},
		{name: "PUT", provider: "groq", method: http.MethodPut, path: "/assistants/asst_1", body: `{"name":"x"}`,
			target: providers.Target{BaseURL: srv.URL + "/openai/v1"}, wantPath: "/openai/v1/assistants/asst_1"},
		{name: "DELETE", provider: "openai", method: http.MethodDelete, path: "/files/file-abc",
			wantPath: "/v1/files/file-abc"},
		{name: "azure file, not deployment-scoped", provider: "azure-openai", method: http.MethodGet, path: "/files", query: "limit=1",
			target:   providers.Target{BaseURL: srv.URL + "/openai", Options: map[string]string{providers.OptionAzureDeployment: "dep", providers.OptionAzureAPIVersion: "2024-10-21"}},
			wantPath: "/openai/files", wantQuery: "limit=1&api-version=2024-10-21"},
		{name: "azure audio, deployment-scoped", provider: "azure-openai", method: http.MethodPost, path: "/audio/speech", body: `{"input":"hi"}`,
			target:   providers.Target{BaseURL: srv.URL + "/openai", Options: map[string]string{providers.OptionAzureDeployment: "tts"}},
			wantPath: "/openai/deployments/tts/audio/speech", wantQuery: "api-version=" + openaicompat.AzureDefaultAPIVersion},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.target.BaseURL == "" {
				tc.target.BaseURL = srv.BaseURL()
			}
			tc.target.Provider, tc.target.APIKey = tc.provider, testKey
			call := providers.Call{Endpoint: providers.EndpointPassThrough, Method: tc.method, Path: tc.path, Query: tc.query,
				Body: json.RawMessage(tc.body), Header: http.Header{"X-Client-Trace": {"t-1"}, "Authorization": {"Bearer client-key"}}}
			resp, err := adapter(t, tc.provider).(providers.PassThrougher).PassThrough(context.Background(), tc.target, call)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.JSONEq(t, mustJSON(t, map[string]any{"method": tc.method, "path": tc.wantPath, "query": tc.wantQuery, "body": tc.body}), string(raw),
				"the provider's answer comes back unchanged")

			got := srv.LastRequest()
			assert.Equal(t, tc.method, got.Method)
			assert.Equal(t, tc.body, string(got.Body), "the body goes out unchanged")
			assert.Equal(t, "t-1", got.Header.Get("X-Client-Trace"))
			if tc.provider == "azure-openai" {
				assert.Equal(t, testKey, got.Header.Get("Api-Key"))
				assert.Empty(t, got.Header.Get("Authorization"))
			} else {
				assert.Equal(t, "Bearer "+testKey, got.Header.Get("Authorization"), "the Target's credential, never the client's")
			}
		})
	}

	t.Run("a streamed answer is left to copy", func(t *testing.T) {
		srv.SetStream(providertest.StreamPlan{Chunks: 3})
		call := providers.Call{Endpoint: providers.EndpointPassThrough, Method: http.MethodPost, Path: "/chat/completions",
			Body: json.RawMessage(`{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"hi"}]}`)}
		resp, err := adapter(t, "openai").(providers.PassThrougher).PassThrough(context.Background(),
			providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, call)
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Contains(t, resp.Header.Get("Content-Type"), "text/event-stream")
		var data []string
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data = append(data, line)
			}
		}
		require.NoError(t, sc.Err())
		require.Len(t, data, 6, "role, 3 pieces, finish, [DONE]: nothing added, nothing taken")
		assert.Equal(t, "[DONE]", data[5])
		assert.NotContains(t, string(srv.LastRequest().Body), "stream_options", "pass-through bodies are not touched")
	})

	t.Run("an error answer is returned raw too", func(t *testing.T) {
		srv.Script(providertest.Answer{Status: http.StatusNotFound, Body: `{"error":{"message":"No such File object: file-x","type":"invalid_request_error","param":"id","code":null}}`})
		resp, err := adapter(t, "openai").(providers.PassThrougher).PassThrough(context.Background(),
			providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey},
			providers.Call{Endpoint: providers.EndpointPassThrough, Method: http.MethodGet, Path: "/files/file-x"})
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		up := providers.NewUpstreamError("openai", resp, testKey)
		assert.Equal(t, http.StatusNotFound, up.Status)
		assert.Equal(t, "No such File object: file-x", providertest.ErrorFields(t, up.Body)["message"])
	})

	for _, path := range []string{"/files/../admin", "/files/%2e%2e/admin", "/files?x=1", "/a#b"} {
		t.Run("refused path "+path, func(t *testing.T) {
			_, err := adapter(t, "openai").(providers.PassThrougher).PassThrough(context.Background(),
				providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey},
				providers.Call{Endpoint: providers.EndpointPassThrough, Method: http.MethodGet, Path: path})
			var de *domain.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, "path", de.Param)
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return string(raw)
}

func TestUpstreamErrors(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name        string
		answer      providertest.Answer
		wantStatus  int
		wantRetry   func(t *testing.T, d time.Duration)
		wantMessage string
		wantType    string
		wantCode    any
	}{
		{
			name: "429 with Retry-After seconds",
			answer: providertest.Answer{Status: 429, Header: http.Header{"Retry-After": {"7"}},
				Body: `{"error":{"message":"Rate limit reached for gpt-4o","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
			wantStatus: 429, wantMessage: "Rate limit reached for gpt-4o", wantType: "requests", wantCode: "rate_limit_exceeded",
			wantRetry: func(t *testing.T, d time.Duration) { assert.Equal(t, 7*time.Second, d) },
		},
		{
			name:       "429 with Retry-After as an HTTP date",
			answer:     providertest.Answer{Status: 429, Header: http.Header{"Retry-After": {date}}, Body: `{"error":{"message":"slow down","type":"rate_limit_error"}}`},
			wantStatus: 429, wantMessage: "slow down", wantType: "rate_limit_error",
			wantRetry: func(t *testing.T, d time.Duration) {
				assert.Greater(t, d, 80*time.Second)
				assert.LessOrEqual(t, d, 90*time.Second)
			},
		},
		{
			name:       "429 with OpenAI's retry-after-ms",
			answer:     providertest.Answer{Status: 429, Header: http.Header{"Retry-After-Ms": {"1500"}, "Retry-After": {"2"}}, Body: `{"error":{"message":"wait"}}`},
			wantStatus: 429, wantMessage: "wait", wantType: providers.ProviderErrorType,
			wantRetry: func(t *testing.T, d time.Duration) { assert.Equal(t, 1500*time.Millisecond, d) },
		},
		{
			name:       "500 with a plain-text body",
			answer:     providertest.Answer{Status: 500, Header: http.Header{"Content-Type": {"text/plain"}}, Body: "upstream exploded\n"},
			wantStatus: 500, wantMessage: "openai answered 500: upstream exploded", wantType: providers.ProviderErrorType,
			wantRetry: func(t *testing.T, d time.Duration) { assert.Zero(t, d) },
		},
		{
			name:       "503 with an empty body",
			answer:     providertest.Answer{Status: 503},
			wantStatus: 503, wantMessage: "openai answered 503: Service Unavailable", wantType: providers.ProviderErrorType,
		},
		{
			name:       "Mistral's top-level error object",
			answer:     providertest.Answer{Status: 422, Body: `{"object":"error","message":"Extra inputs are not permitted","type":"invalid_request_error","param":null,"code":null}`},
			wantStatus: 422, wantMessage: "openai answered 422: Extra inputs are not permitted", wantType: "invalid_request_error",
		},
		{
			name:       "Ollama's bare error string",
			answer:     providertest.Answer{Status: 404, Body: `{"error":"model \"llama9\" not found, try pulling it first"}`},
			wantStatus: 404, wantMessage: `openai answered 404: model "llama9" not found, try pulling it first`, wantType: providers.ProviderErrorType,
		},
		{
			name:       "FastAPI's detail",
			answer:     providertest.Answer{Status: 400, Body: `{"detail":"max_tokens is too large"}`},
			wantStatus: 400, wantMessage: "openai answered 400: max_tokens is too large", wantType: providers.ProviderErrorType,
		},
		{
			name:       "a body that quotes the key is scrubbed",
			answer:     providertest.Answer{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: ` + testKey + `.","type":"invalid_request_error","code":"invalid_api_key"}}`},
			wantStatus: 401, wantMessage: "Incorrect API key provided: [redacted].", wantType: "invalid_request_error", wantCode: "invalid_api_key",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewOpenAI(t)
			srv.Script(tc.answer)
			_, err := adapter(t, "openai").Chat(context.Background(), providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, chatCall(chatBody))
			var up *providers.UpstreamError
			require.ErrorAs(t, err, &up)
			assert.Equal(t, tc.wantStatus, up.Status)
			assert.Equal(t, "openai", up.Provider)
			if tc.wantRetry != nil {
				tc.wantRetry(t, up.RetryAfter)
			}
			e := providertest.ErrorFields(t, up.Body)
			assert.Equal(t, tc.wantMessage, e["message"])
			assert.Equal(t, tc.wantType, e["type"])
			assert.Equal(t, tc.wantCode, e["code"])
			noKey(t, err)
		})
	}

	t.Run("a stream refused with a large error body keeps it whole", func(t *testing.T) {
		srv := providertest.NewOpenAI(t)
		long := strings.Repeat("too many requests ", 20000)
		srv.Script(providertest.Answer{Status: 429, Header: http.Header{"Retry-After": {"1"}}, Body: mustJSON(t, map[string]any{"error": map[string]any{"message": long}})})
		call := chatCall(chatBody)
		call.Stream = true
		_, err := adapter(t, "openai").(providers.ChatStreamer).ChatStream(context.Background(), providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, call)
		var up *providers.UpstreamError
		require.ErrorAs(t, err, &up)
		assert.Equal(t, time.Second, up.RetryAfter)
		assert.Equal(t, long, providertest.ErrorFields(t, up.Body)["message"])
	})

	t.Run("401 from a wrong key, streamed or not", func(t *testing.T) {
		srv := providertest.NewOpenAI(t)
		srv.RequireKey("sk-the-right-one")
		target := providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}
		_, err := adapter(t, "openai").Chat(context.Background(), target, chatCall(chatBody))
		var up *providers.UpstreamError
		require.ErrorAs(t, err, &up)
		assert.Equal(t, http.StatusUnauthorized, up.Status)
		assert.Equal(t, "invalid_api_key", providertest.ErrorFields(t, up.Body)["code"])
		noKey(t, err)

		call := chatCall(chatBody)
		call.Stream = true
		_, err = adapter(t, "openai").(providers.ChatStreamer).ChatStream(context.Background(), target, call)
		require.ErrorAs(t, err, &up)
		assert.Equal(t, http.StatusUnauthorized, up.Status)
		noKey(t, err)
	})
}

func TestConnectionErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	refused := "http://" + ln.Addr().String() + "/v1?key=" + testKey
	require.NoError(t, ln.Close())

	srv := providertest.NewOpenAI(t)

	t.Run("connection refused", func(t *testing.T) {
		for _, p := range []string{"openai", "azure-openai", "vllm"} {
			_, err := adapter(t, p).Chat(context.Background(), providers.Target{Provider: p, BaseURL: refused, APIKey: testKey,
				Options: map[string]string{providers.OptionAzureDeployment: "d"}}, chatCall(chatBody))
			var ce *providers.ConnectionError
			require.ErrorAs(t, err, &ce, p)
			assert.False(t, ce.Timeout)
			assert.Equal(t, p, ce.Provider)
			noKey(t, err)
		}
	})

	t.Run("client timeout", func(t *testing.T) {
		srv.Script(providertest.Answer{Delay: 2 * time.Second, Body: `{}`})
		_, err := adapter(t, "openai").Chat(context.Background(), providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey,
			Client: &http.Client{Timeout: 50 * time.Millisecond}}, chatCall(chatBody))
		var ce *providers.ConnectionError
		require.ErrorAs(t, err, &ce)
		assert.True(t, ce.Timeout)
		noKey(t, err)
	})

	t.Run("context deadline", func(t *testing.T) {
		srv.Script(providertest.Answer{Delay: 2 * time.Second, Body: `{}`})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := adapter(t, "openai").Chat(ctx, providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, chatCall(chatBody))
		var ce *providers.ConnectionError
		require.ErrorAs(t, err, &ce)
		assert.True(t, ce.Timeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})

	t.Run("cancelled context", func(t *testing.T) {
		srv := providertest.NewOpenAI(t)
		srv.Script(providertest.Answer{Delay: 2 * time.Second, Body: `{}`})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		_, err := adapter(t, "openai").Chat(ctx, providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, chatCall(chatBody))
		assert.Equal(t, context.Canceled, err, "a caller that gave up gets ctx.Err()")
		assert.Less(t, time.Since(start), time.Second)
		select {
		case <-srv.Disconnects():
		case <-time.After(time.Second):
			t.Fatal("the stand-in did not see the cancel")
		}
	})
}

func TestStrictOpenAI(t *testing.T) {
	body := `{"model":"gpt-4o","messages":[{"role":"user","content":"Think first"}],"thinking":{"type":"enabled","budget_tokens":2048},"top_k":40,"temperature":0.2}`
	cases := []struct {
		name   string
		strict bool
		stream bool
		check  func(t *testing.T, sent []byte)
	}{
		{name: "strict strips fields beyond OpenAI's", strict: true, check: func(t *testing.T, sent []byte) {
			assert.JSONEq(t, `{"model":"gpt-4o","messages":[{"role":"user","content":"Think first"}],"temperature":0.2}`, string(sent))
		}},
		{name: "strict strips them from a stream too", strict: true, stream: true, check: func(t *testing.T, sent []byte) {
			assert.JSONEq(t, `{"model":"gpt-4o","messages":[{"role":"user","content":"Think first"}],"temperature":0.2,"stream":true,"stream_options":{"include_usage":true}}`, string(sent))
		}},
		{name: "not strict passes them on byte for byte", check: func(t *testing.T, sent []byte) {
			assert.Equal(t, body, string(sent))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := providertest.NewOpenAI(t)
			target := providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey, StrictOpenAI: tc.strict}
			call := chatCall(body)
			if tc.stream {
				call.Stream = true
				s, err := adapter(t, "openai").(providers.ChatStreamer).ChatStream(context.Background(), target, call)
				require.NoError(t, err)
				_, err = drain(t, s)
				require.ErrorIs(t, err, io.EOF)
				require.NoError(t, s.Close())
			} else {
				_, err := adapter(t, "openai").Chat(context.Background(), target, call)
				require.NoError(t, err)
			}
			tc.check(t, srv.LastRequest().Body)
		})
	}
}

func TestCallModelAndStreamFlagWin(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	call := chatCall(`{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	call.Model = "gpt-4o-mini"
	_, err := adapter(t, "openai").Chat(context.Background(), providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, call)
	require.NoError(t, err)
	sent := srv.LastRequest().JSON()
	assert.Equal(t, "gpt-4o-mini", sent["model"], "the call's model, after config overrides")
	assert.Equal(t, false, sent["stream"], "a whole answer is asked for as one")
	assert.NotContains(t, sent, "stream_options")
}

func TestForwardHeaders(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	call := chatCall(chatBody)
	call.Header = http.Header{
		"X-Customer-Trace":      {"abc-123"},
		"OpenAI-Beta":           {"assistants=v2"},
		"x-gateway-api-key":     {"gw-secret"},
		"X-Gateway-Provider":    {"openai"},
		"Authorization":         {"Bearer client-own-key"},
		"Api-Key":               {"client-azure-key"},
		"Connection":            {"close"},
		"Accept-Encoding":       {"br"},
		"X-Gateway-Config":      {`{"retry":{"attempts":3}}`},
		"X-Gateway-Virtual-Key": {"vk"},
	}
	_, err := adapter(t, "openai").Chat(context.Background(), providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, call)
	require.NoError(t, err)
	got := srv.LastRequest().Header
	assert.Equal(t, "abc-123", got.Get("X-Customer-Trace"))
	assert.Equal(t, "assistants=v2", got.Get("Openai-Beta"))
	assert.Equal(t, "Bearer "+testKey, got.Get("Authorization"))
	assert.Empty(t, got.Get("Api-Key"))
	assert.NotEqual(t, "br", got.Get("Accept-Encoding"), "an answer the adapter reads is asked for in an encoding it reads")
	for name := range got {
		assert.False(t, strings.HasPrefix(strings.ToLower(name), "x-gateway-"), "%s must not reach the provider", name)
	}
}

func TestOpenAIOrganizationHeaders(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	_, err := adapter(t, "openai").Chat(context.Background(), providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey,
		Options: map[string]string{providers.OptionOpenAIOrg: "org-1", providers.OptionOpenAIProject: "proj_1"}}, chatCall(chatBody))
	require.NoError(t, err)
	got := srv.LastRequest().Header
	assert.Equal(t, "org-1", got.Get("OpenAI-Organization"))
	assert.Equal(t, "proj_1", got.Get("OpenAI-Project"))
}

// TestAzureStreamUsageByAPIVersion: API versions before 2024-09-01 refuse stream_options, so
// none is added for them.
func TestAzureStreamUsageByAPIVersion(t *testing.T) {
	cases := []struct {
		version   string
		wantAsked bool
	}{
		{"2024-02-01", false},
		{"2024-08-01-preview", false},
		{"2024-10-21", true},
		{"", true}, // the default version
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			srv := providertest.NewOpenAI(t)
			opts := map[string]string{providers.OptionAzureDeployment: "dep"}
			if tc.version != "" {
				opts[providers.OptionAzureAPIVersion] = tc.version
			}
			call := chatCall(chatBody)
			call.Stream = true
			s, err := adapter(t, "azure-openai").(providers.ChatStreamer).ChatStream(context.Background(),
				providers.Target{Provider: "azure-openai", BaseURL: srv.URL + "/openai", APIKey: testKey, Options: opts}, call)
			require.NoError(t, err)
			defer s.Close()
			chunks, err := drain(t, s)
			require.ErrorIs(t, err, io.EOF)
			assert.Len(t, chunks, 7)
			_, asked := srv.LastRequest().JSON()["stream_options"]
			assert.Equal(t, tc.wantAsked, asked)
		})
	}
}

// TestStreamCloseWhileReading: the gateway may close a stream from another goroutine while
// Next waits on the upstream (its client went away); Next then fails, and nothing races.
func TestStreamCloseWhileReading(t *testing.T) {
	srv := providertest.NewOpenAI(t)
	srv.SetStream(providertest.StreamPlan{Chunks: 100, Delay: 10 * time.Millisecond})
	call := chatCall(chatBody)
	call.Stream = true
	s, err := adapter(t, "openai").(providers.ChatStreamer).ChatStream(context.Background(),
		providers.Target{Provider: "openai", BaseURL: srv.BaseURL(), APIKey: testKey}, call)
	require.NoError(t, err)
	result := make(chan error, 1)
	go func() {
		for {
			if _, err := s.Next(); err != nil {
				result <- err
				return
			}
		}
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, s.Close())
	select {
	case err := <-result:
		assert.NotErrorIs(t, err, io.EOF)
	case <-time.After(time.Second):
		t.Fatal("Next did not return after Close")
	}
	select {
	case <-srv.Disconnects():
	case <-time.After(time.Second):
		t.Fatal("the stand-in did not see the close")
	}
}
