package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/anthropic"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

const testKey = "sk-ant-api03-standin-secret-0123456789"

func standInTarget(s *providertest.AnthropicServer) providers.Target {
	return providers.Target{Provider: "anthropic", BaseURL: s.BaseURL(), APIKey: testKey}
}

func chatCall(body string) providers.Call {
	return providers.Call{Endpoint: providers.EndpointChat, Model: "claude-sonnet-4-5", Body: json.RawMessage(body)}
}

func TestAnthropicRequestTranslation(t *testing.T) {
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	weather := `{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`
	clock := `{"type":"function","function":{"name":"get_time"}}`
	cases := []struct {
		name   string
		target func(*providers.Target)
		body   string
		check  func(t *testing.T, got map[string]any)
	}{
		{
			name: "system and developer messages become the top-level system, max_tokens defaults to 4096",
			body: `{"model":"claude-x","messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"Answer in English."}]},{"role":"user","content":"Hi"}]}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, "claude-sonnet-4-5", got["model"], "the call's model (after overrides) wins over the body's")
				assert.Equal(t, []any{
					map[string]any{"type": "text", "text": "Be brief."},
					map[string]any{"type": "text", "text": "Answer in English."},
				}, got["system"])
				assert.Equal(t, []any{map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Hi"}}}}, got["messages"])
				assert.Equal(t, 4096.0, got["max_tokens"])
				assert.NotContains(t, got, "stream")
				assert.NotContains(t, got, "stop_sequences")
				assert.NotContains(t, got, "tools")
			},
		},
		{
			name: "max_completion_tokens wins over max_tokens",
			body: `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":100,"max_completion_tokens":50}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, 50.0, got["max_tokens"])
			},
		},
		{
			name: "max_tokens alone, temperature, top_p, and user as metadata.user_id",
			body: `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":100,"temperature":0.2,"top_p":0.9,"user":"end-user-7"}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, 100.0, got["max_tokens"])
				assert.Equal(t, 0.2, got["temperature"])
				assert.Equal(t, 0.9, got["top_p"])
				assert.Equal(t, map[string]any{"user_id": "end-user-7"}, got["metadata"])
			},
		},
		{
			name: "stop as a string",
			body: `{"messages":[{"role":"user","content":"Hi"}],"stop":"END"}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, []any{"END"}, got["stop_sequences"])
			},
		},
		{
			name: "stop as an array",
			body: `{"messages":[{"role":"user","content":"Hi"}],"stop":["\n\n","Human:"]}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, []any{"\n\n", "Human:"}, got["stop_sequences"])
			},
		},
		{
			name: "images: a data URL as a base64 source, an https URL as a url source, a PDF as a document",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + png + `"}},` +
				`{"type":"image_url","image_url":{"url":"https://example.com/cat.jpg","detail":"high"}},` +
				`{"type":"image_url","image_url":{"url":"data:application/pdf;base64,JVBERi0xLjQ="}}]}]}`,
			check: func(t *testing.T, got map[string]any) {
				content := providertest.Dig(got, "messages", 0, "content")
				assert.Equal(t, []any{
					map[string]any{"type": "text", "text": "What is this?"},
					map[string]any{"type": "image", "source": map[string]any{"type": "base64", "media_type": "image/png", "data": png}},
					map[string]any{"type": "image", "source": map[string]any{"type": "url", "url": "https://example.com/cat.jpg"}},
					map[string]any{"type": "document", "source": map[string]any{"type": "base64", "media_type": "application/pdf", "data": "JVBERi0xLjQ="}},
				}, content)
			},
		},
		{
			name: "tools become name, description and input_schema; required becomes any",
			body: `{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `,` + clock + `],"tool_choice":"required"}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, []any{
					map[string]any{"name": "get_weather", "description": "Weather of a city", "input_schema": map[string]any{
						"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}}},
					map[string]any{"name": "get_time", "input_schema": map[string]any{"type": "object", "properties": map[string]any{}}},
				}, got["tools"], "a function without parameters still gets the input_schema Anthropic requires")
				assert.Equal(t, map[string]any{"type": "any"}, got["tool_choice"])
			},
		},
		{
			name: "tool_choice none",
			body: `{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `],"tool_choice":"none"}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"type": "none"}, got["tool_choice"])
			},
		},
		{
			name: "tool_choice auto, parallel_tool_calls false",
			body: `{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `],"tool_choice":"auto","parallel_tool_calls":false}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"type": "auto", "disable_parallel_tool_use": true}, got["tool_choice"])
			},
		},
		{
			name: "tool_choice naming a function becomes type tool",
			body: `{"messages":[{"role":"user","content":"Time?"}],"tools":[` + weather + `,` + clock + `],"tool_choice":{"type":"function","function":{"name":"get_time"}}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"type": "tool", "name": "get_time"}, got["tool_choice"])
			},
		},
		{
			name: "tool_choice without tools is not sent",
			body: `{"messages":[{"role":"user","content":"Hi"}],"tool_choice":"auto"}`,
			check: func(t *testing.T, got map[string]any) {
				assert.NotContains(t, got, "tool_choice")
			},
		},
		{
			name: "assistant tool calls become tool_use blocks; consecutive tool results share one user turn",
			body: `{"messages":[{"role":"user","content":"Weather in Paris and Rome?"},` +
				`{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
				`{"id":"toolu_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},` +
				`{"role":"tool","tool_call_id":"toolu_1","content":"18C"},` +
				`{"role":"tool","tool_call_id":"toolu_2","content":[{"type":"text","text":"21C"}]},` +
				`{"role":"user","content":"Thanks"}],"tools":[` + weather + `]}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, []any{
					map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Weather in Paris and Rome?"}}},
					map[string]any{"role": "assistant", "content": []any{
						map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": map[string]any{"city": "Paris"}},
						map[string]any{"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": map[string]any{"city": "Rome"}},
					}},
					map[string]any{"role": "user", "content": []any{
						map[string]any{"type": "tool_result", "tool_use_id": "toolu_1", "content": []any{map[string]any{"type": "text", "text": "18C"}}},
						map[string]any{"type": "tool_result", "tool_use_id": "toolu_2", "content": []any{map[string]any{"type": "text", "text": "21C"}}},
					}},
					map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Thanks"}}},
				}, got["messages"])
			},
		},
		{
			name: "deprecated functions and function_call become tools and a forced tool; function messages answer by made-up ids",
			body: `{"messages":[{"role":"user","content":"Time?"},` +
				`{"role":"assistant","content":"Checking.","function_call":{"name":"get_time","arguments":"{}"}},` +
				`{"role":"function","name":"get_time","content":"noon"}],` +
				`"functions":[{"name":"get_time","description":"Current time"}],"function_call":{"name":"get_time"}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, []any{map[string]any{"name": "get_time", "description": "Current time",
					"input_schema": map[string]any{"type": "object", "properties": map[string]any{}}}}, got["tools"])
				assert.Equal(t, map[string]any{"type": "tool", "name": "get_time"}, got["tool_choice"])
				use := providertest.Dig(got, "messages", 1, "content", 1)
				result := providertest.Dig(got, "messages", 2, "content", 0)
				assert.Equal(t, "tool_use", providertest.Dig(use, "type"))
				assert.Equal(t, "tool_result", providertest.Dig(result, "type"))
				assert.NotEmpty(t, providertest.Dig(use, "id"))
				assert.Equal(t, providertest.Dig(use, "id"), providertest.Dig(result, "tool_use_id"))
			},
		},
		{
			name: "thinking is passed on when the target is not strict, with thinking parts of earlier answers",
			body: `{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":[` +
				`{"type":"thinking","thinking":"Hmm.","signature":"sig-1"},{"type":"redacted_thinking","data":"opaque"},{"type":"text","text":"Hello"}]},` +
				`{"role":"user","content":"More"}],"max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":2048}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"type": "enabled", "budget_tokens": 2048.0}, got["thinking"])
				assert.Equal(t, []any{
					map[string]any{"type": "thinking", "thinking": "Hmm.", "signature": "sig-1"},
					map[string]any{"type": "redacted_thinking", "data": "opaque"},
					map[string]any{"type": "text", "text": "Hello"},
				}, providertest.Dig(got, "messages", 1, "content"))
			},
		},
		{
			name:   "thinking is dropped when the target is strict",
			target: func(tg *providers.Target) { tg.StrictOpenAI = true },
			body: `{"messages":[{"role":"user","content":"Hi"},{"role":"assistant","content":[` +
				`{"type":"thinking","thinking":"Hmm.","signature":"sig-1"},{"type":"text","text":"Hello"}]},` +
				`{"role":"user","content":"More"}],"max_tokens":4000,"thinking":{"type":"enabled","budget_tokens":2048}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.NotContains(t, got, "thinking")
				assert.Equal(t, []any{map[string]any{"type": "text", "text": "Hello"}}, providertest.Dig(got, "messages", 1, "content"))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewAnthropic(t)
			target := standInTarget(s)
			if tc.target != nil {
				tc.target(&target)
			}
			_, err := anthropic.New(nil).Chat(context.Background(), target, chatCall(tc.body))
			require.NoError(t, err, "the stand-in refuses what Anthropic would refuse")
			tc.check(t, s.LastRequest().JSON())
		})
	}
}

func TestAnthropicRequestHeaders(t *testing.T) {
	s := providertest.NewAnthropic(t)
	s.RequireKey(testKey)
	target := standInTarget(s)
	target.Options = map[string]string{"anthropic_beta": "prompt-caching-2024-07-31"}
	call := chatCall(`{"messages":[{"role":"user","content":"Hi"}]}`)
	call.Header = http.Header{"X-Custom": {"kept"}, "Authorization": {"Bearer client-key"}, "X-Gateway-Trace-Id": {"t1"}}

	_, err := anthropic.New(nil).Chat(context.Background(), target, call)
	require.NoError(t, err)

	req := s.LastRequest()
	assert.Equal(t, http.MethodPost, req.Method)
	assert.Equal(t, "/v1/messages", req.Path)
	assert.Equal(t, testKey, req.Header.Get("X-Api-Key"))
	assert.Equal(t, "2023-06-01", req.Header.Get("Anthropic-Version"))
	assert.Equal(t, "prompt-caching-2024-07-31", req.Header.Get("Anthropic-Beta"))
	assert.Equal(t, "application/json", req.Header.Get("Content-Type"))
	assert.Equal(t, "kept", req.Header.Get("X-Custom"), "forwarded headers reach the provider")
	assert.Empty(t, req.Header.Get("Authorization"), "a forwarded credential never reaches the provider")
	assert.Empty(t, req.Header.Get("X-Gateway-Trace-Id"))

	t.Run("a base URL that already ends in /v1 gets no second", func(t *testing.T) {
		target.BaseURL = s.BaseURL() + "/v1/"
		_, err := anthropic.New(nil).Chat(context.Background(), target, chatCall(`{"messages":[{"role":"user","content":"Hi"}]}`))
		require.NoError(t, err)
		assert.Equal(t, "/v1/messages", s.LastRequest().Path)
	})
}

func TestAnthropicRequestRefusals(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		code  domain.Code
		param string
	}{
		{"not JSON", `{"messages":`, domain.CodeInvalid, ""},
		{"no messages", `{"messages":[]}`, domain.CodeInvalid, "messages"},
		{"n above 1", `{"messages":[{"role":"user","content":"Hi"}],"n":2}`, domain.CodeUnsupported, "n"},
		{"arguments that are not a JSON object", `{"messages":[{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`,
			domain.CodeInvalid, "messages[0].tool_calls[0].function.arguments"},
		{"an audio part", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}]}]}`,
			domain.CodeUnsupported, "messages[0].content[0].type"},
		{"an image URL of another scheme", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`,
			domain.CodeInvalid, "messages[0].content[0].image_url.url"},
		{"an unknown role", `{"messages":[{"role":"robot","content":"Hi"}]}`, domain.CodeInvalid, "messages[0].role"},
		{"a tool message without tool_call_id", `{"messages":[{"role":"tool","content":"x"}]}`, domain.CodeInvalid, "messages[0].tool_call_id"},
		{"a non-function tool, which the gateway's parser refuses first", `{"messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"code_interpreter"}]}`,
			domain.CodeInvalid, "tools[0].type"},
		{"a bad tool_choice", `{"messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"always"}`,
			domain.CodeInvalid, "tool_choice"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewAnthropic(t)
			_, err := anthropic.New(nil).Chat(context.Background(), standInTarget(s), chatCall(tc.body))
			var de *domain.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.code, de.Code)
			assert.Equal(t, tc.param, de.Param)
			assert.Empty(t, s.Requests(), "nothing is sent upstream")
		})
	}

	t.Run("a non-function tool", func(t *testing.T) {
		s := providertest.NewAnthropic(t)
		call := chatCall("")
		call.Chat = &openai.ChatRequest{Model: "claude-x", N: 1, Messages: []openai.Message{{Role: "user", Text: "Hi"}},
			Tools: []openai.Tool{{Type: "code_interpreter"}}}
		call.Body = json.RawMessage(`{"model":"claude-x","messages":[{"role":"user","content":"Hi"}],"tools":[{"type":"code_interpreter"}]}`)
		_, err := anthropic.New(nil).Chat(context.Background(), standInTarget(s), call)
		var de *domain.Error
		require.ErrorAs(t, err, &de)
		assert.Equal(t, domain.CodeUnsupported, de.Code)
		assert.Equal(t, "tools[0].type", de.Param)
		assert.Empty(t, s.Requests(), "nothing is sent upstream")
	})
}

func TestAnthropicAnswerTranslation(t *testing.T) {
	weather := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`
	message := func(content string, stop string) string {
		return `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":` + content +
			`,"stop_reason":"` + stop + `","stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":5}}`
	}
	cases := []struct {
		name     string
		strict   bool
		body     string
		scripted string // the stand-in's answer; empty: its default
		check    func(t *testing.T, got map[string]any, usage providers.Usage)
	}{
		{
			name: "text, stop, and usage counting cached input",
			body: `{"messages":[{"role":"user","content":"Say hello to me"}]}`,
			check: func(t *testing.T, got map[string]any, usage providers.Usage) {
				assert.Equal(t, "chat.completion", got["object"])
				assert.Regexp(t, `^msg_standin`, got["id"])
				assert.Equal(t, "claude-sonnet-4-5", got["model"])
				assert.NotZero(t, got["created"])
				assert.Equal(t, map[string]any{"role": "assistant", "content": providertest.Reply}, providertest.Dig(got, "choices", 0, "message"))
				assert.Equal(t, "stop", providertest.Dig(got, "choices", 0, "finish_reason"))
				assert.Equal(t, 0.0, providertest.Dig(got, "choices", 0, "index"))
				// 4 words of input + 30 read from the cache + 5 written to it.
				assert.Equal(t, providers.Usage{PromptTokens: 39, CompletionTokens: 4, TotalTokens: 43, CachedTokens: 30,
					CacheWriteTokens: 5}, usage)
				assert.Equal(t, map[string]any{"prompt_tokens": 39.0, "completion_tokens": 4.0, "total_tokens": 43.0,
					"prompt_tokens_details": map[string]any{"cached_tokens": 30.0}}, got["usage"])
			},
		},
		{
			name: "tool_use becomes tool_calls with JSON-string arguments",
			body: `{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `]}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				msg := providertest.Dig(got, "choices", 0, "message")
				assert.Equal(t, providertest.AnthropicToolPreamble, providertest.Dig(msg, "content"))
				assert.Equal(t, []any{map[string]any{"id": "toolu_standin0001", "type": "function",
					"function": map[string]any{"name": "get_weather", "arguments": `{"city":"stand-in"}`}}}, providertest.Dig(msg, "tool_calls"))
				assert.Equal(t, "tool_calls", providertest.Dig(got, "choices", 0, "finish_reason"))
			},
		},
		{
			name:     "a tool call alone has null content",
			body:     `{"messages":[{"role":"user","content":"Weather?"}]}`,
			scripted: message(`[{"type":"tool_use","id":"toolu_9","name":"f","input":{}}]`, "tool_use"),
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				msg := providertest.Dig(got, "choices", 0, "message").(map[string]any)
				assert.Contains(t, msg, "content")
				assert.Nil(t, msg["content"])
				assert.Equal(t, "{}", providertest.Dig(msg, "tool_calls", 0, "function", "arguments"))
			},
		},
		{
			name: "deprecated functions answer with function_call",
			body: `{"messages":[{"role":"user","content":"Weather?"}],"functions":[{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}]}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				msg := providertest.Dig(got, "choices", 0, "message").(map[string]any)
				assert.Equal(t, map[string]any{"name": "get_weather", "arguments": `{"city":"stand-in"}`}, msg["function_call"])
				assert.NotContains(t, msg, "tool_calls")
				assert.Equal(t, "function_call", providertest.Dig(got, "choices", 0, "finish_reason"))
			},
		},
		{
			name: "max_tokens becomes length",
			body: `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				assert.Equal(t, "Hello from", providertest.Dig(got, "choices", 0, "message", "content"))
				assert.Equal(t, "length", providertest.Dig(got, "choices", 0, "finish_reason"))
			},
		},
		{
			name: "stop_sequence becomes stop",
			body: `{"messages":[{"role":"user","content":"Hi"}],"stop":"stand-in"}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				assert.Equal(t, "Hello from the ", providertest.Dig(got, "choices", 0, "message", "content"))
				assert.Equal(t, "stop", providertest.Dig(got, "choices", 0, "finish_reason"))
			},
		},
		{
			name:     "refusal becomes content_filter",
			body:     `{"messages":[{"role":"user","content":"Hi"}]}`,
			scripted: message(`[{"type":"text","text":"I can't help with that."}]`, "refusal"),
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				assert.Equal(t, "content_filter", providertest.Dig(got, "choices", 0, "finish_reason"))
			},
		},
		{
			name: "thinking blocks are exposed as content_blocks when the target is not strict",
			body: `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":3000,"thinking":{"type":"enabled","budget_tokens":1024}}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				msg := providertest.Dig(got, "choices", 0, "message")
				assert.Equal(t, providertest.Reply, providertest.Dig(msg, "content"))
				assert.Equal(t, []any{
					map[string]any{"type": "thinking", "thinking": providertest.AnthropicThinking, "signature": providertest.AnthropicSignature},
					map[string]any{"type": "text", "text": providertest.Reply},
				}, providertest.Dig(msg, "content_blocks"))
			},
		},
		{
			name:     "a strict target never shows thinking",
			strict:   true,
			body:     `{"messages":[{"role":"user","content":"Hi"}]}`,
			scripted: message(`[{"type":"thinking","thinking":"secret","signature":"s"},{"type":"redacted_thinking","data":"x"},{"type":"text","text":"Hi"}]`, "end_turn"),
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				assert.Equal(t, map[string]any{"role": "assistant", "content": "Hi"}, providertest.Dig(got, "choices", 0, "message"))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewAnthropic(t)
			s.SetCacheUsage(30, 5)
			if tc.scripted != "" {
				s.Script(providertest.Answer{Body: tc.scripted})
			}
			target := standInTarget(s)
			target.StrictOpenAI = tc.strict
			resp, err := anthropic.New(nil).Chat(context.Background(), target, chatCall(tc.body))
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.Status)
			assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			tc.check(t, providertest.Decode(t, resp.Body), resp.Usage)
		})
	}
}

func TestAnthropicStream(t *testing.T) {
	weather := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`
	cases := []struct {
		name   string
		strict bool
		body   string
		check  func(t *testing.T, chunks []map[string]any, usage providers.Usage)
	}{
		{
			name: "text: a role chunk first, the deltas in order, the finish reason, then usage when asked",
			body: `{"messages":[{"role":"user","content":"Say hello"}],"stream":true,"stream_options":{"include_usage":true}}`,
			check: func(t *testing.T, chunks []map[string]any, usage providers.Usage) {
				require.Len(t, chunks, 1+4+1+1)
				for _, c := range chunks {
					assert.Equal(t, "chat.completion.chunk", c["object"])
					assert.Equal(t, "msg_standin0001", c["id"])
					assert.Equal(t, "claude-sonnet-4-5", c["model"])
				}
				assert.Equal(t, map[string]any{"role": "assistant", "content": ""}, providertest.Dig(chunks[0], "choices", 0, "delta"))
				assert.Equal(t, providertest.StreamText(4), providertest.Content(chunks))
				for _, c := range chunks[:5] {
					assert.Nil(t, providertest.Dig(c, "choices", 0, "finish_reason"))
				}
				assert.Equal(t, "stop", providertest.Dig(chunks[5], "choices", 0, "finish_reason"))
				assert.Equal(t, map[string]any{}, providertest.Dig(chunks[5], "choices", 0, "delta"))
				assert.Equal(t, []any{}, chunks[6]["choices"])
				// 2 words of input + 2 read from the cache; 4 deltas out.
				assert.Equal(t, map[string]any{"prompt_tokens": 4.0, "completion_tokens": 4.0, "total_tokens": 8.0,
					"prompt_tokens_details": map[string]any{"cached_tokens": 2.0}}, chunks[6]["usage"])
				assert.Equal(t, providers.Usage{PromptTokens: 4, CompletionTokens: 4, TotalTokens: 8, CachedTokens: 2}, usage)
			},
		},
		{
			name: "no usage chunk unless asked, usage still captured",
			body: `{"messages":[{"role":"user","content":"Say hello"}],"stream":true}`,
			check: func(t *testing.T, chunks []map[string]any, usage providers.Usage) {
				require.Len(t, chunks, 1+4+1)
				for _, c := range chunks {
					assert.NotContains(t, c, "usage")
				}
				assert.Equal(t, 4, usage.CompletionTokens)
			},
		},
		{
			name: "tool use: the call's start with id and name, then its arguments by index",
			body: `{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `],"stream":true}`,
			check: func(t *testing.T, chunks []map[string]any, _ providers.Usage) {
				assert.Equal(t, "assistant", providertest.Dig(chunks[0], "choices", 0, "delta", "role"))
				assert.Equal(t, providertest.AnthropicToolPreamble, providertest.Content(chunks))
				var starts []any
				var args strings.Builder
				for _, c := range chunks {
					calls, _ := providertest.Dig(c, "choices", 0, "delta", "tool_calls").([]any)
					for _, call := range calls {
						if providertest.Dig(call, "id") != nil {
							starts = append(starts, call)
							continue
						}
						assert.Equal(t, 0.0, providertest.Dig(call, "index"), "the tool call's index, not the content block's")
						args.WriteString(providertest.Dig(call, "function", "arguments").(string))
					}
				}
				assert.Equal(t, []any{map[string]any{"index": 0.0, "id": "toolu_standin0001", "type": "function",
					"function": map[string]any{"name": "get_weather", "arguments": ""}}}, starts)
				assert.JSONEq(t, `{"city":"stand-in"}`, args.String())
				assert.Equal(t, "tool_calls", providertest.Dig(chunks[len(chunks)-1], "choices", 0, "finish_reason"))
			},
		},
		{
			name: "thinking deltas as content_blocks when the target is not strict",
			body: `{"messages":[{"role":"user","content":"Hi"}],"stream":true,"max_tokens":3000,"thinking":{"type":"enabled","budget_tokens":1024}}`,
			check: func(t *testing.T, chunks []map[string]any, _ providers.Usage) {
				var blocks []any
				for _, c := range chunks {
					if b, ok := providertest.Dig(c, "choices", 0, "delta", "content_blocks").([]any); ok {
						blocks = append(blocks, b...)
					}
				}
				assert.Equal(t, []any{
					map[string]any{"index": 0.0, "delta": map[string]any{"thinking": providertest.AnthropicThinking}},
					map[string]any{"index": 0.0, "delta": map[string]any{"signature": providertest.AnthropicSignature}},
				}, blocks)
				assert.Equal(t, providertest.StreamText(4), providertest.Content(chunks))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewAnthropic(t)
			s.SetCacheUsage(2, 0)
			s.SetStream(providertest.StreamPlan{Chunks: 4})
			target := standInTarget(s)
			target.StrictOpenAI = tc.strict
			call := chatCall(tc.body)
			call.Stream = true
			st, err := anthropic.New(nil).ChatStream(context.Background(), target, call)
			require.NoError(t, err)
			defer st.Close()
			chunks, err := providertest.Drain(t, st)
			require.NoError(t, err)
			assert.Equal(t, true, s.LastRequest().JSON()["stream"])
			tc.check(t, chunks, st.Usage())
		})
	}
}

func TestAnthropicStreamStrictDropsThinking(t *testing.T) {
	s := providertest.NewAnthropic(t)
	ev := providertest.AnthropicEvent
	s.Script(providertest.Answer{Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: strings.Join([]string{
		ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_s", "model": "claude-x", "usage": map[string]any{"input_tokens": 3, "output_tokens": 1}}}),
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "thinking", "thinking": ""}}),
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "thinking_delta", "thinking": "secret"}}),
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "signature_delta", "signature": "sig"}}),
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0}),
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 1, "content_block": map[string]any{"type": "text", "text": ""}}),
		ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "text_delta", "text": "Hi"}}),
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 1}),
		ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]any{"output_tokens": 9}}),
		ev("message_stop", map[string]any{"type": "message_stop"}),
	}, "")})
	target := standInTarget(s)
	target.StrictOpenAI = true
	st, err := anthropic.New(nil).ChatStream(context.Background(), target, chatCall(`{"messages":[{"role":"user","content":"Hi"}],"stream":true}`))
	require.NoError(t, err)
	defer st.Close()
	chunks, err := providertest.Drain(t, st)
	require.NoError(t, err)
	require.Len(t, chunks, 3, "role, text, finish: nothing of the thinking")
	assert.Equal(t, "Hi", providertest.Content(chunks))
	assert.Equal(t, "claude-x", chunks[0]["model"])
	assert.Equal(t, providers.Usage{PromptTokens: 3, CompletionTokens: 9, TotalTokens: 12}, st.Usage())
}

func TestAnthropicStreamFailures(t *testing.T) {
	cases := []struct {
		name   string
		plan   providertest.StreamPlan
		chunks int // chunks delivered before the failure
		check  func(t *testing.T, err error)
	}{
		{
			name: "an error event mid-stream is an upstream error with the status of its type",
			plan: providertest.StreamPlan{Chunks: 5, ErrorAfter: 2}, chunks: 3,
			check: func(t *testing.T, err error) {
				var ue *providers.UpstreamError
				require.ErrorAs(t, err, &ue)
				assert.Equal(t, 529, ue.Status)
				assert.Equal(t, "anthropic", ue.Provider)
				body := providertest.Decode(t, ue.Body)
				assert.Equal(t, "overloaded_error", providertest.Dig(body, "error", "type"))
				assert.Equal(t, "Overloaded", providertest.Dig(body, "error", "message"))
			},
		},
		{
			name: "a connection cut mid-stream is a connection error",
			plan: providertest.StreamPlan{Chunks: 5, CutAfter: 2}, chunks: 3,
			check: func(t *testing.T, err error) {
				var ce *providers.ConnectionError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, "anthropic", ce.Provider)
			},
		},
		{
			name: "a stream that ends cleanly without message_stop is an error, not the end",
			plan: providertest.StreamPlan{Chunks: 3, OmitDone: true}, chunks: 4,
			check: func(t *testing.T, err error) {
				var ce *providers.ConnectionError
				require.ErrorAs(t, err, &ce)
				assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
				assert.Contains(t, err.Error(), "message_stop")
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewAnthropic(t)
			s.SetStream(tc.plan)
			st, err := anthropic.New(nil).ChatStream(context.Background(), standInTarget(s),
				chatCall(`{"messages":[{"role":"user","content":"Hi"}],"stream":true}`))
			require.NoError(t, err)
			defer st.Close()
			chunks, err := providertest.Drain(t, st)
			require.Error(t, err, "never a silent end")
			assert.Len(t, chunks, tc.chunks)
			assert.NotContains(t, err.Error(), testKey)
			tc.check(t, err)
			_, again := st.Next()
			assert.Equal(t, err, again, "the failure sticks")
		})
	}
}

func TestAnthropicErrors(t *testing.T) {
	cases := []struct {
		name       string
		answer     providertest.Answer
		status     int
		retryAfter time.Duration
		typ        string
		message    string
	}{
		{"400 invalid request", providertest.Answer{Status: 400, Body: providertest.AnthropicErrorBody("invalid_request_error", "messages: roles must alternate")},
			400, 0, "invalid_request_error", "messages: roles must alternate"},
		{"401 quoting the key is scrubbed", providertest.Answer{Status: 401, Body: providertest.AnthropicErrorBody("authentication_error", "invalid x-api-key "+testKey)},
			401, 0, "authentication_error", "invalid x-api-key [redacted]"},
		{"429 with retry-after", providertest.Answer{Status: 429, Header: http.Header{"Retry-After": {"7"}},
			Body: providertest.AnthropicErrorBody("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit")},
			429, 7 * time.Second, "rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"},
		{"529 overloaded", providertest.Answer{Status: 529, Body: providertest.AnthropicErrorBody("overloaded_error", "Overloaded")},
			529, 0, "overloaded_error", "Overloaded"},
		{"502 from a proxy in front, not JSON", providertest.Answer{Status: 502, Header: http.Header{"Content-Type": {"text/html"}}, Body: "<html>Bad Gateway</html>"},
			502, 0, providers.ProviderErrorType, "anthropic answered 502: <html>Bad Gateway</html>"},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				s := providertest.NewAnthropic(t)
				s.Script(tc.answer)
				a := anthropic.New(nil)
				call := chatCall(`{"messages":[{"role":"user","content":"Hi"}]}`)
				var err error
				if stream {
					_, err = a.ChatStream(context.Background(), standInTarget(s), call)
				} else {
					_, err = a.Chat(context.Background(), standInTarget(s), call)
				}
				var ue *providers.UpstreamError
				require.ErrorAs(t, err, &ue)
				assert.Equal(t, tc.status, ue.Status)
				assert.Equal(t, tc.retryAfter, ue.RetryAfter)
				assert.Equal(t, "anthropic", ue.Provider)
				body := providertest.Decode(t, ue.Body)
				assert.Equal(t, tc.typ, providertest.Dig(body, "error", "type"))
				assert.Equal(t, tc.message, providertest.Dig(body, "error", "message"))
				assert.Contains(t, providertest.Dig(body, "error").(map[string]any), "param")
				assert.NotContains(t, string(ue.Body), testKey)
				assert.NotContains(t, err.Error(), testKey)
			})
		}
	}
}

func TestAnthropicConnectionFailures(t *testing.T) {
	body := `{"messages":[{"role":"user","content":"Hi"}]}`
	t.Run("an unreachable provider is a connection error without the key", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close()
		target := providers.Target{BaseURL: closed.URL, APIKey: testKey}
		_, err := anthropic.New(nil).Chat(context.Background(), target, chatCall(body))
		var ce *providers.ConnectionError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "anthropic", ce.Provider)
		assert.NotContains(t, err.Error(), testKey)
	})
	t.Run("a cancelled caller gets its context's error", func(t *testing.T) {
		s := providertest.NewAnthropic(t)
		s.Script(providertest.Answer{Body: "{}", Delay: 5 * time.Second})
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := anthropic.New(nil).Chat(ctx, standInTarget(s), chatCall(body))
		require.ErrorIs(t, err, context.Canceled)
		var ce *providers.ConnectionError
		assert.False(t, errors.As(err, &ce), "a caller that gave up is not the provider's failure")
	})
	t.Run("a deadline is a timed-out connection error", func(t *testing.T) {
		s := providertest.NewAnthropic(t)
		s.Script(providertest.Answer{Body: "{}", Delay: 5 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := anthropic.New(nil).Chat(ctx, standInTarget(s), chatCall(body))
		var ce *providers.ConnectionError
		require.ErrorAs(t, err, &ce)
		assert.True(t, ce.Timeout)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("cancelling mid-stream ends the stream and reaches the provider", func(t *testing.T) {
		s := providertest.NewAnthropic(t)
		s.SetStream(providertest.StreamPlan{Chunks: 100, Delay: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		st, err := anthropic.New(nil).ChatStream(ctx, standInTarget(s), chatCall(`{"messages":[{"role":"user","content":"Hi"}],"stream":true}`))
		require.NoError(t, err)
		for range 3 {
			_, err := st.Next()
			require.NoError(t, err)
		}
		cancel()
		var nextErr error
		for nextErr == nil {
			_, nextErr = st.Next()
		}
		require.ErrorIs(t, nextErr, context.Canceled)
		require.NoError(t, st.Close())
		select {
		case d := <-s.Disconnects():
			assert.Less(t, d.Chunks, 100)
		case <-time.After(time.Second):
			t.Fatal("the stand-in did not see the cancel within a second")
		}
	})
}

func TestAnthropicPassThrough(t *testing.T) {
	s := providertest.NewAnthropic(t)
	a := anthropic.New(nil)
	target := standInTarget(s)
	target.Options = map[string]string{"anthropic_beta": "token-counting-2024-11-01"}

	resp, err := a.PassThrough(context.Background(), target, providers.Call{Endpoint: providers.EndpointPassThrough,
		Method: http.MethodPost, Path: "/messages/count_tokens", Query: "beta=true", Body: json.RawMessage(`{"model":"claude-x"}`)})
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"method": "POST", "path": "/v1/messages/count_tokens", "query": "beta=true", "body": `{"model":"claude-x"}`},
		providertest.Decode(t, raw))
	req := s.LastRequest()
	assert.Equal(t, testKey, req.Header.Get("X-Api-Key"))
	assert.Equal(t, "2023-06-01", req.Header.Get("Anthropic-Version"))
	assert.Equal(t, "token-counting-2024-11-01", req.Header.Get("Anthropic-Beta"))

	t.Run("a refusal comes back unchanged, not as an error", func(t *testing.T) {
		s.Script(providertest.Answer{Status: 404, Body: providertest.AnthropicErrorBody("not_found_error", "model: claude-x")})
		resp, err := a.PassThrough(context.Background(), target, providers.Call{Method: http.MethodGet, Path: "/models/claude-x"})
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, 404, resp.StatusCode)
		raw, _ := io.ReadAll(resp.Body)
		assert.JSONEq(t, providertest.AnthropicErrorBody("not_found_error", "model: claude-x"), string(raw))
	})
	t.Run("a path that climbs out of the base is refused", func(t *testing.T) {
		for _, p := range []string{"/../admin", "/a/%2e%2e/b", "/x?y=1"} {
			_, err := a.PassThrough(context.Background(), target, providers.Call{Method: http.MethodGet, Path: p})
			assert.Equal(t, domain.CodeInvalid, domain.ErrorCode(err), p)
		}
	})
}

func TestAnthropicVersionOption(t *testing.T) {
	s := providertest.NewAnthropic(t)
	target := standInTarget(s)
	target.Options = map[string]string{providers.OptionAnthropicVersion: "2023-01-01", providers.OptionAnthropicBeta: "b1"}
	_, err := anthropic.New(nil).Chat(context.Background(), target, chatCall(`{"messages":[{"role":"user","content":"Hi"}]}`))
	require.NoError(t, err)
	assert.Equal(t, "2023-01-01", s.LastRequest().Header.Get("Anthropic-Version"))
	assert.Equal(t, "b1", s.LastRequest().Header.Get("Anthropic-Beta"))
}
