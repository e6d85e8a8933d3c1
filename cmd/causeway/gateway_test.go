package main

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go"
	"github.com/openai/openai-go/option"
	"github.com/openai/openai-go/packages/param"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/analytics"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

const gatewayKey = "gateway-test-admin-key-00000000001"

// startGateway runs the real Main with the local stand-ins reachable as custom hosts.
func startGateway(t *testing.T) *Main {
	t.Helper()
	return startMain(t, map[string]string{"CAUSEWAY_BOOTSTRAP_ADMIN_KEY": gatewayKey, "CAUSEWAY_ALLOWED_HOSTS": "127.0.0.1"})
}

// sdk is the official OpenAI Go client pointed at Causeway, naming a provider and its host.
func sdk(m *Main, provider, host string, extra ...option.RequestOption) openai.Client {
	opts := append([]option.RequestOption{
		option.WithBaseURL(m.URL() + "/"), option.WithAPIKey("sk-provider-key"), option.WithMaxRetries(0),
		option.WithHeader("x-gateway-api-key", gatewayKey), option.WithHeader("x-gateway-provider", provider),
		option.WithHeader("x-gateway-custom-host", host),
	}, extra...)
	return openai.NewClient(opts...)
}

func userMessage(text string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{Model: "test-model", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}}
}

// Chat without and with streaming, and tool calls, through three providers' stand-ins.
func TestGatewayChatThroughEveryProviderKind(t *testing.T) {
	m := startGateway(t)
	oa, an, ge := providertest.NewOpenAI(t), providertest.NewAnthropic(t), providertest.NewGemini(t)
	for _, tc := range []struct {
		provider, host string
	}{
		{"openai", oa.BaseURL()},
		{"anthropic", an.BaseURL()},
		{"google", ge.BaseURL()},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			ctx := context.Background()
			client := sdk(m, tc.provider, tc.host)
			res, err := client.Chat.Completions.New(ctx, userMessage("Say hello"))
			require.NoError(t, err)
			require.NotEmpty(t, res.Choices)
			assert.NotEmpty(t, res.Choices[0].Message.Content)
			assert.Equal(t, "assistant", string(res.Choices[0].Message.Role))
			assert.Positive(t, res.Usage.TotalTokens, "usage is returned")

			stream := client.Chat.Completions.NewStreaming(ctx, userMessage("Count to five"))
			var acc openai.ChatCompletionAccumulator
			chunks := 0
			for stream.Next() {
				acc.AddChunk(stream.Current())
				chunks++
			}
			require.NoError(t, stream.Err())
			assert.Greater(t, chunks, 1, "streamed chunk by chunk")
			require.NotEmpty(t, acc.Choices)
			assert.NotEmpty(t, acc.Choices[0].Message.Content)

			params := userMessage("What is the weather in Paris?")
			params.Tools = []openai.ChatCompletionToolParam{{Function: openai.FunctionDefinitionParam{
				Name: "get_weather", Description: param.NewOpt("Current weather"),
				Parameters: openai.FunctionParameters{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []string{"city"}},
			}}}
			res, err = client.Chat.Completions.New(ctx, params)
			require.NoError(t, err)
			require.NotEmpty(t, res.Choices[0].Message.ToolCalls, "the tool call comes back in OpenAI's shape")
			assert.Equal(t, "get_weather", res.Choices[0].Message.ToolCalls[0].Function.Name)
			assert.True(t, json.Valid([]byte(res.Choices[0].Message.ToolCalls[0].Function.Arguments)))
		})
	}
}

func TestGatewayEmbeddingsAndCompletions(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	client := sdk(m, "openai", oa.BaseURL())
	ctx := context.Background()
	emb, err := client.Embeddings.New(ctx, openai.EmbeddingNewParams{Model: "text-embedding-3-small",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"a", "b"}}})
	require.NoError(t, err)
	assert.Len(t, emb.Data, 2)
	assert.NotEmpty(t, emb.Data[0].Embedding)

	comp, err := client.Completions.New(ctx, openai.CompletionNewParams{Model: "gpt-3.5-turbo-instruct",
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: param.NewOpt("Once upon")}})
	require.NoError(t, err)
	require.NotEmpty(t, comp.Choices)
	assert.NotEmpty(t, comp.Choices[0].Text)

	// The request went to the stand-in with the provider key, not Causeway's.
	last := oa.LastRequest()
	assert.Equal(t, "Bearer sk-provider-key", last.Header.Get("Authorization"))
	assert.Empty(t, last.Header.Get("x-gateway-api-key"), "Causeway's key never reaches the provider")
}

// Validation answers 400 in OpenAI's shape with the field as param; bad credentials 401.
func TestGatewayRefusals(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	ctx := context.Background()
	client := sdk(m, "openai", oa.BaseURL())
	params := userMessage("hi")
	params.Temperature = param.NewOpt(2.5)
	_, err := client.Chat.Completions.New(ctx, params)
	var apiErr *openai.Error
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode)
	assert.Equal(t, "temperature", apiErr.Param)
	assert.Empty(t, oa.Requests(), "nothing reached the provider")

	bad := sdk(m, "openai", oa.BaseURL(), option.WithHeader("x-gateway-api-key", "nope"))
	_, err = bad.Chat.Completions.New(ctx, userMessage("hi"))
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnauthorized, apiErr.StatusCode)

	private := sdk(m, "openai", "http://169.254.169.254/v1")
	_, err = private.Chat.Completions.New(ctx, userMessage("hi"))
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusBadRequest, apiErr.StatusCode, "the metadata address is refused")
	assert.Equal(t, "x-gateway-custom-host", apiErr.Param)
}

// 25 requests against a policy of 20 per minute: exactly 20 allowed and 5 refused with 429,
// with the remaining counts in the headers.
func TestGatewayRateLimitPolicy(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	admin := func(path string, body any) map[string]any { return post(t, m.URL()+path, gatewayKey, body) }
	ws := admin("/workspaces", map[string]any{"name": "Limited"})["id"].(string)
	key := admin("/api-keys/workspace/service", map[string]any{"name": "app", "workspace_id": ws, "scopes": []string{"completions.write"}})["key"].(string)
	freshMinute(t)
	admin("/policies/rate-limits", map[string]any{"workspace_id": ws, "type": "requests", "unit": "rpm", "value": 20,
		"conditions": []map[string]string{{"key": "workspace_id", "value": ws}}, "group_by": []map[string]string{{"key": "api_key"}}})

	allowed, refused := 0, 0
	var remaining []string
	for i := 0; i < 25; i++ {
		resp, _ := chatThrough(t, m, key, oa.BaseURL(), `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil)
		switch resp.StatusCode {
		case http.StatusOK:
			allowed++
			remaining = append(remaining, resp.Header.Get("x-ratelimit-remaining"))
		case http.StatusTooManyRequests:
			refused++
			assert.Equal(t, "0", resp.Header.Get("x-ratelimit-remaining"))
			assert.NotEmpty(t, resp.Header.Get("x-ratelimit-reset"))
			assert.NotEmpty(t, resp.Header.Get("Retry-After"))
		default:
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
		assert.Equal(t, "20", resp.Header.Get("x-ratelimit-limit"))
	}
	assert.Equal(t, 20, allowed)
	assert.Equal(t, 5, refused)
	assert.Equal(t, "19", remaining[0])
	assert.Equal(t, "0", remaining[19])
	assert.Len(t, oa.Requests(), 20, "refused requests never reached the provider")
}

// The client closes after 10 of 100 chunks; the provider sees the cancel within a second.
func TestGatewayStreamCancelReachesTheProvider(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	oa.SetStream(providertest.StreamPlan{Chunks: 100, Delay: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	client := sdk(m, "openai", oa.BaseURL())
	stream := client.Chat.Completions.NewStreaming(ctx, userMessage("long story"))
	got := 0
	for stream.Next() {
		if len(stream.Current().Choices) > 0 && stream.Current().Choices[0].Delta.Content != "" {
			got++
		}
		if got == 10 {
			break
		}
	}
	closed := time.Now()
	cancel()
	_ = stream.Close()
	select {
	case d := <-oa.Disconnects():
		assert.Less(t, d.At.Sub(closed), time.Second, "the provider saw the cancel within a second")
		assert.Less(t, d.Chunks, 100)
		t.Logf("the provider saw the client go after %d chunks, %s after it closed", d.Chunks, d.At.Sub(closed).Round(time.Millisecond))
	case <-time.After(2 * time.Second):
		t.Fatal("the provider never saw the client go")
	}
}

// A provider that fails mid-stream ends the stream with an error event, never in silence.
func TestGatewayMidStreamFailureEndsWithAnError(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	oa.SetStream(providertest.StreamPlan{Chunks: 10, CutAfter: 3})
	client := sdk(m, "openai", oa.BaseURL())
	stream := client.Chat.Completions.NewStreaming(context.Background(), userMessage("x"))
	for stream.Next() {
	}
	require.Error(t, stream.Err(), "the client learns the stream failed")
}

// Every request, refused ones included, hands one log record to the pipeline, which stores it.
func TestGatewayLogsEveryRequest(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	client := sdk(m, "openai", oa.BaseURL(), option.WithHeader("x-gateway-trace-id", "trace-42"),
		option.WithHeader("x-gateway-metadata", `{"_user":"ann","team":"x"}`))
	_, err := client.Chat.Completions.New(context.Background(), userMessage("hi"))
	require.NoError(t, err)
	bad := userMessage("hi")
	bad.N = param.NewOpt(int64(500))
	_, err = client.Chat.Completions.New(context.Background(), bad)
	require.Error(t, err)

	var records []analytics.LogRecord
	require.Eventually(t, func() bool {
		page, err := m.Analytics.Logs(context.Background(), analytics.LogsQuery{
			Filter: analytics.Filter{OrganisationID: m.Bootstrap.OrganisationID}})
		records = page.Rows
		return err == nil && len(records) == 2
	}, 5*time.Second, 10*time.Millisecond)
	slices.SortFunc(records, func(a, b analytics.LogRecord) int { return a.StatusCode - b.StatusCode })
	ok := records[0]
	assert.Equal(t, "trace-42", ok.TraceID)
	assert.Equal(t, 200, ok.StatusCode)
	assert.Equal(t, "openai", ok.AIService)
	assert.Equal(t, "chatComplete", ok.Endpoint)
	assert.Positive(t, ok.TotalTokens)
	assert.Equal(t, map[string]string{"_user": "ann", "team": "x"}, ok.Metadata)
	assert.Equal(t, 400, records[1].StatusCode, "refused requests are logged too")
	raw, _ := json.Marshal(records)
	assert.NotContains(t, string(raw), "sk-provider-key", "no credential in a log record")
	assert.NotContains(t, string(raw), gatewayKey)
}

// A managed provider (@slug) from an integration: the client never sees the provider key,
// which the gateway opens in memory; a config with fallback and retries; a saved config.
func TestGatewayManagedProvidersAndConfigs(t *testing.T) {
	m := startGateway(t)
	primary, backup := providertest.NewOpenAI(t), providertest.NewOpenAI(t)
	admin := func(path string, body any) map[string]any { return post(t, m.URL()+path, gatewayKey, body) }
	ws := admin("/workspaces", map[string]any{"name": "Apps"})["id"].(string)
	key := admin("/api-keys/workspace/service", map[string]any{"name": "app", "workspace_id": ws, "scopes": []string{"completions.write"}})["key"].(string)
	admin("/integrations", map[string]any{"name": "Primary", "slug": "primary", "ai_provider_id": "openai", "key": "sk-primary-secret",
		"workspace_id": ws, "configurations": map[string]any{"custom_host": primary.BaseURL()}})
	admin("/integrations", map[string]any{"name": "Backup", "slug": "backup", "ai_provider_id": "openai", "key": "sk-backup-secret",
		"workspace_id": ws, "configurations": map[string]any{"custom_host": backup.BaseURL()}})

	call := func(headers map[string]string) (*http.Response, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, m.URL()+"/chat/completions",
			strings.NewReader(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("x-gateway-api-key", key)
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp, body
	}

	resp, body := call(map[string]string{"x-gateway-provider": "@primary"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", body)
	assert.Equal(t, "Bearer sk-primary-secret", primary.LastRequest().Header.Get("Authorization"), "the sealed key, opened in memory")
	resp, _ = call(map[string]string{"x-gateway-virtual-key": "backup"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "the legacy virtual-key header")
	assert.Equal(t, "Bearer sk-backup-secret", backup.LastRequest().Header.Get("Authorization"))

	// Fallback: the primary answers 503 (twice: once, and once more on retry), the backup serves.
	primary.Script(providertest.Answer{Status: 503, Body: `{"error":{"message":"down"}}`}, providertest.Answer{Status: 503, Body: `{"error":{"message":"down"}}`})
	config := `{"strategy":{"mode":"fallback"},"targets":[{"provider":"@primary","retry":{"attempts":1,"on_status_codes":[503]}},{"provider":"@backup","override_params":{"temperature":0.1}}]}`
	before := len(backup.Requests())
	resp, body = call(map[string]string{"x-gateway-config": config})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", body)
	assert.Equal(t, "0.1", resp.Header.Get("x-gateway-target"), "the answer names the target that served")
	assert.Len(t, backup.Requests(), before+1)
	assert.EqualValues(t, 0.1, backup.LastRequest().JSON()["temperature"], "override_params reach the provider")

	// Retry on 429 with Retry-After, then success on the same target.
	primary.Script(providertest.Answer{Status: 429, Header: http.Header{"Retry-After": {"0"}}, Body: `{"error":{"message":"slow down"}}`})
	resp, _ = call(map[string]string{"x-gateway-config": `{"provider":"@primary","retry":{"attempts":2}}`})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("x-gateway-retry-count"))

	// A saved config, referred to by its slug, behaves as the same config inline.
	saved := admin("/configs", map[string]any{"name": "Prod routing", "slug": "prod-routing", "workspace_id": ws,
		"config": map[string]any{"strategy": map[string]any{"mode": "loadbalance"}, "targets": []map[string]any{{"provider": "@backup", "weight": 1}}}})
	require.NotEmpty(t, saved)
	before = len(backup.Requests())
	resp, body = call(map[string]string{"x-gateway-config": "prod-routing"})
	require.Equal(t, http.StatusOK, resp.StatusCode, "%v", body)
	assert.Len(t, backup.Requests(), before+1)

	// Config errors carry their AB code and name the header.
	resp, body = call(map[string]string{"x-gateway-config": `{"strategy":{"mode":"roundrobin"},"targets":[{"provider":"@primary"}]}`})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	errBody := body["error"].(map[string]any)
	assert.Equal(t, "AB02", errBody["code"])
	assert.Contains(t, errBody["param"], "x-gateway-config")
	resp, _ = call(map[string]string{"x-gateway-provider": "@nobody"})
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

// The SDK spellings of the headers (5.1, 5.4): snake_case and camelCase without the prefix.
func TestGatewayHeaderAliases(t *testing.T) {
	m := startGateway(t)
	oa := providertest.NewOpenAI(t)
	for _, spelling := range []map[string]string{
		{"api_key": gatewayKey, "provider": "openai", "custom_host": oa.BaseURL(), "trace_id": "t-snake"},
		{"apiKey": gatewayKey, "provider": "openai", "customHost": oa.BaseURL(), "traceId": "t-camel"},
	} {
		req, _ := http.NewRequest(http.MethodPost, m.URL()+"/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Authorization", "Bearer sk")
		for k, v := range spelling {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%v", spelling)
	}
}
