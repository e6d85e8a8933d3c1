package gemini_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/gemini"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

const testKey = "AIzaSyStandInSecret0123456789abcdefghi"

func standInTarget(s *providertest.GeminiServer) providers.Target {
	return providers.Target{Provider: "google", BaseURL: s.BaseURL(), APIKey: testKey}
}

func chatCall(body string) providers.Call {
	return providers.Call{Endpoint: providers.EndpointChat, Model: "gemini-2.0-flash", Body: json.RawMessage(body)}
}

func TestGeminiRequestTranslation(t *testing.T) {
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	weather := `{"type":"function","function":{"name":"get_weather","description":"Weather of a city","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}}`
	clock := `{"type":"function","function":{"name":"get_time"}}`
	cases := []struct {
		name   string
		target func(*providers.Target)
		model  string
		body   string
		check  func(t *testing.T, got map[string]any)
	}{
		{
			name: "system and developer messages become systemInstruction; assistant turns are the model's",
			body: `{"model":"other","messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"Answer in English."}]},` +
				`{"role":"user","content":"Hi"},{"role":"assistant","content":"Hello"},{"role":"user","content":[{"type":"text","text":"Bye"}]}]}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"parts": []any{map[string]any{"text": "Be brief."}, map[string]any{"text": "Answer in English."}}},
					got["systemInstruction"])
				assert.Equal(t, []any{
					map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Hi"}}},
					map[string]any{"role": "model", "parts": []any{map[string]any{"text": "Hello"}}},
					map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Bye"}}},
				}, got["contents"])
				assert.NotContains(t, got, "generationConfig", "nothing to configure")
				assert.NotContains(t, got, "tools")
				assert.NotContains(t, got, "toolConfig")
			},
		},
		{
			name: "generationConfig: temperature, topP, maxOutputTokens, stopSequences, candidateCount, penalties, seed, JSON schema",
			body: `{"messages":[{"role":"user","content":"Hi"}],"temperature":0.3,"top_p":0.8,"max_tokens":99,"max_completion_tokens":64,` +
				`"stop":["x","y"],"n":2,"presence_penalty":0.5,"frequency_penalty":-0.5,"seed":7,` +
				`"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{
					"temperature": 0.3, "topP": 0.8, "maxOutputTokens": 64.0, "stopSequences": []any{"x", "y"}, "candidateCount": 2.0,
					"presencePenalty": 0.5, "frequencyPenalty": -0.5, "seed": 7.0, "responseMimeType": "application/json",
					"responseJsonSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}},
				}, got["generationConfig"])
			},
		},
		{
			name: "stop as a string, max_tokens alone, json_object",
			body: `{"messages":[{"role":"user","content":"Hi"}],"stop":"END","max_tokens":99,"n":1,"response_format":{"type":"json_object"}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"stopSequences": []any{"END"}, "maxOutputTokens": 99.0, "responseMimeType": "application/json"},
					got["generationConfig"], "n=1 is Gemini's default and is not sent")
			},
		},
		{
			name: "images: a data URL as inlineData, another URL as fileData",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,` + png + `"}},` +
				`{"type":"image_url","image_url":{"url":"https://example.com/cat.webp?size=2"}}]}]}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, []any{
					map[string]any{"text": "What is this?"},
					map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": png}},
					map[string]any{"fileData": map[string]any{"mimeType": "image/webp", "fileUri": "https://example.com/cat.webp?size=2"}},
				}, providertest.Dig(got, "contents", 0, "parts"))
			},
		},
		{
			name: "tools become functionDeclarations with their JSON Schema unchanged; required becomes ANY",
			body: `{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `,` + clock + `],"tool_choice":"required"}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, []any{map[string]any{"functionDeclarations": []any{
					map[string]any{"name": "get_weather", "description": "Weather of a city", "parametersJsonSchema": map[string]any{
						"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"},
						"additionalProperties": false}},
					map[string]any{"name": "get_time"},
				}}}, got["tools"])
				assert.Equal(t, map[string]any{"functionCallingConfig": map[string]any{"mode": "ANY"}}, got["toolConfig"])
			},
		},
		{
			name: "tool_choice naming a function: ANY limited to it",
			body: `{"messages":[{"role":"user","content":"Time?"}],"tools":[` + weather + `,` + clock + `],"tool_choice":{"type":"function","function":{"name":"get_time"}}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"functionCallingConfig": map[string]any{"mode": "ANY", "allowedFunctionNames": []any{"get_time"}}}, got["toolConfig"])
			},
		},
		{
			name: "tool_choice none and auto",
			body: `{"messages":[{"role":"user","content":"Time?"}],"tools":[` + clock + `],"tool_choice":"none"}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"functionCallingConfig": map[string]any{"mode": "NONE"}}, got["toolConfig"])
			},
		},
		{
			name: "tool_choice auto",
			body: `{"messages":[{"role":"user","content":"Time?"}],"tools":[` + clock + `],"tool_choice":"auto"}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"functionCallingConfig": map[string]any{"mode": "AUTO"}}, got["toolConfig"])
			},
		},
		{
			name: "assistant tool calls become functionCall parts; tool results one user turn of functionResponse parts",
			body: `{"messages":[{"role":"user","content":"Weather in Paris and Rome?"},` +
				`{"role":"assistant","content":"Looking.","tool_calls":[` +
				`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
				`{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":18}"},` +
				`{"role":"tool","tool_call_id":"call_2","content":"21C"}],"tools":[` + weather + `]}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, []any{
					map[string]any{"role": "user", "parts": []any{map[string]any{"text": "Weather in Paris and Rome?"}}},
					map[string]any{"role": "model", "parts": []any{
						map[string]any{"text": "Looking."},
						map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": map[string]any{"city": "Paris"}}},
						map[string]any{"functionCall": map[string]any{"name": "get_weather", "args": map[string]any{"city": "Rome"}}},
					}},
					map[string]any{"role": "user", "parts": []any{
						map[string]any{"functionResponse": map[string]any{"name": "get_weather", "response": map[string]any{"temp": 18.0}}},
						map[string]any{"functionResponse": map[string]any{"name": "get_weather", "response": map[string]any{"content": "21C"}}},
					}},
				}, got["contents"])
			},
		},
		{
			name: "a thought signature carried in a tool call id goes back on its functionCall part",
			body: `{"messages":[{"role":"user","content":"Time?"},` +
				`{"role":"assistant","tool_calls":[{"id":"call_9__thought__c2lnbmF0dXJl","type":"function","function":{"name":"get_time","arguments":""}}]},` +
				`{"role":"tool","tool_call_id":"call_9__thought__c2lnbmF0dXJl","content":"noon"}],` +
				`"tools":[` + clock + `],"thinking":{"type":"enabled","budget_tokens":1024}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"functionCall": map[string]any{"name": "get_time", "args": map[string]any{}}, "thoughtSignature": "c2lnbmF0dXJl"},
					providertest.Dig(got, "contents", 1, "parts", 0))
				assert.Equal(t, map[string]any{"thinkingBudget": 1024.0, "includeThoughts": true}, providertest.Dig(got, "generationConfig", "thinkingConfig"))
			},
		},
		{
			name:   "thinking is dropped when the target is strict",
			target: func(tg *providers.Target) { tg.StrictOpenAI = true },
			body:   `{"messages":[{"role":"user","content":"Hi"}],"thinking":{"type":"enabled","budget_tokens":1024}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.NotContains(t, got, "generationConfig")
			},
		},
		{
			name: "thinking disabled sets a zero budget",
			body: `{"messages":[{"role":"user","content":"Hi"}],"thinking":{"type":"disabled"}}`,
			check: func(t *testing.T, got map[string]any) {
				assert.Equal(t, map[string]any{"thinkingBudget": 0.0}, providertest.Dig(got, "generationConfig", "thinkingConfig"))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewGemini(t)
			target := standInTarget(s)
			if tc.target != nil {
				tc.target(&target)
			}
			_, err := gemini.New(nil).Chat(context.Background(), target, chatCall(tc.body))
			require.NoError(t, err, "the stand-in refuses what Gemini would refuse")
			tc.check(t, s.LastRequest().JSON())
		})
	}
}

func TestGeminiRequestURLAndHeaders(t *testing.T) {
	s := providertest.NewGemini(t)
	s.RequireKey(testKey)
	call := chatCall(`{"messages":[{"role":"user","content":"Hi"}]}`)
	call.Model = "models/gemini-2.5-pro"
	call.Header = http.Header{"X-Custom": {"kept"}, "X-Goog-Api-Key": {"client-key"}}
	g := gemini.New(nil)

	_, err := g.Chat(context.Background(), standInTarget(s), call)
	require.NoError(t, err)
	req := s.LastRequest()
	assert.Equal(t, "/v1beta/models/gemini-2.5-pro:generateContent", req.Path)
	assert.Empty(t, req.RawQuery, "the key never travels in the URL")
	assert.Equal(t, []string{testKey}, req.Header.Values("X-Goog-Api-Key"), "a forwarded credential never replaces the target's")
	assert.Equal(t, "kept", req.Header.Get("X-Custom"))

	call.Stream = true
	st, err := g.ChatStream(context.Background(), standInTarget(s), call)
	require.NoError(t, err)
	defer st.Close()
	_, err = providertest.Drain(t, st)
	require.NoError(t, err)
	req = s.LastRequest()
	assert.Equal(t, "/v1beta/models/gemini-2.5-pro:streamGenerateContent", req.Path)
	assert.Equal(t, "alt=sse", req.RawQuery)
}

func TestGeminiRequestRefusals(t *testing.T) {
	cases := []struct {
		name  string
		body  string
		code  domain.Code
		param string
	}{
		{"not JSON", `[`, domain.CodeInvalid, ""},
		{"a tool message answering no earlier call", `{"messages":[{"role":"tool","tool_call_id":"nope","content":"x"}]}`, domain.CodeInvalid, "messages[0].tool_call_id"},
		{"an audio part", `{"messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x","format":"wav"}}]}]}`,
			domain.CodeUnsupported, "messages[0].content[0].type"},
		{"a data URL that is not base64", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png,abc"}}]}]}`,
			domain.CodeInvalid, "messages[0].content[0].image_url.url"},
		{"a bad thinking type", `{"messages":[{"role":"user","content":"Hi"}],"thinking":{"type":"sometimes"}}`, domain.CodeInvalid, "thinking.type"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewGemini(t)
			_, err := gemini.New(nil).Chat(context.Background(), standInTarget(s), chatCall(tc.body))
			var de *domain.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.code, de.Code)
			assert.Equal(t, tc.param, de.Param)
			assert.Empty(t, s.Requests())
		})
	}
}

func TestGeminiAnswerTranslation(t *testing.T) {
	weather := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`
	cases := []struct {
		name     string
		strict   bool
		body     string
		scripted string
		check    func(t *testing.T, got map[string]any, usage providers.Usage)
	}{
		{
			name: "text, stop, and usage with cached and thought tokens",
			body: `{"messages":[{"role":"user","content":"Say hello to me"}]}`,
			check: func(t *testing.T, got map[string]any, usage providers.Usage) {
				assert.Equal(t, "chat.completion", got["object"])
				assert.Equal(t, "chatcmpl-standin1", got["id"])
				assert.Equal(t, "gemini-2.0-flash", got["model"])
				assert.Equal(t, []any{map[string]any{"index": 0.0, "logprobs": nil, "finish_reason": "stop",
					"message": map[string]any{"role": "assistant", "content": providertest.Reply}}}, got["choices"])
				// 4 words + 3 cached in; 4 words + 5 thought tokens out.
				assert.Equal(t, providers.Usage{PromptTokens: 7, CompletionTokens: 9, TotalTokens: 16, CachedTokens: 3, ReasoningTokens: 5}, usage)
				assert.Equal(t, map[string]any{"prompt_tokens": 7.0, "completion_tokens": 9.0, "total_tokens": 16.0,
					"prompt_tokens_details":     map[string]any{"cached_tokens": 3.0},
					"completion_tokens_details": map[string]any{"reasoning_tokens": 5.0}}, got["usage"])
			},
		},
		{
			name: "n candidates become n choices",
			body: `{"messages":[{"role":"user","content":"Hi"}],"n":2}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				require.Len(t, got["choices"], 2)
				for i := range 2 {
					assert.Equal(t, float64(i), providertest.Dig(got, "choices", i, "index"))
					assert.Equal(t, providertest.Reply, providertest.Dig(got, "choices", i, "message", "content"))
				}
			},
		},
		{
			name: "a function call becomes a tool call with a made-up id, and finish reason tool_calls",
			body: `{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `]}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				msg := providertest.Dig(got, "choices", 0, "message").(map[string]any)
				assert.Nil(t, msg["content"])
				assert.Regexp(t, `^call_[0-9a-f]{24}$`, providertest.Dig(msg, "tool_calls", 0, "id"))
				assert.Equal(t, "function", providertest.Dig(msg, "tool_calls", 0, "type"))
				assert.Equal(t, map[string]any{"name": "get_weather", "arguments": `{"city":"stand-in"}`}, providertest.Dig(msg, "tool_calls", 0, "function"))
				assert.Equal(t, "tool_calls", providertest.Dig(got, "choices", 0, "finish_reason"))
			},
		},
		{
			name: "with thinking: thoughts as content_blocks, the signature in the tool call id",
			body: `{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `],"thinking":{"type":"enabled","budget_tokens":1024}}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				msg := providertest.Dig(got, "choices", 0, "message")
				id := providertest.Dig(msg, "tool_calls", 0, "id").(string)
				assert.True(t, strings.HasSuffix(id, "__thought__"+providertest.GeminiSignature), id)
				assert.Equal(t, []any{map[string]any{"type": "thinking", "thinking": providertest.GeminiThought}}, providertest.Dig(msg, "content_blocks"))
			},
		},
		{
			name:     "a strict target never shows thoughts",
			strict:   true,
			body:     `{"messages":[{"role":"user","content":"Hi"}]}`,
			scripted: `{"candidates":[{"content":{"role":"model","parts":[{"text":"secret","thought":true},{"text":"Hi"}]},"finishReason":"STOP"}]}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				assert.Equal(t, map[string]any{"role": "assistant", "content": "Hi"}, providertest.Dig(got, "choices", 0, "message"))
			},
		},
		{
			name: "MAX_TOKENS becomes length",
			body: `{"messages":[{"role":"user","content":"Hi"}],"max_tokens":2}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				assert.Equal(t, "Hello from", providertest.Dig(got, "choices", 0, "message", "content"))
				assert.Equal(t, "length", providertest.Dig(got, "choices", 0, "finish_reason"))
			},
		},
		{
			name:     "SAFETY becomes content_filter",
			body:     `{"messages":[{"role":"user","content":"Hi"}]}`,
			scripted: `{"candidates":[{"content":{"role":"model","parts":[{"text":"Partial"}]},"finishReason":"SAFETY","index":0}],"modelVersion":"gemini-2.0-flash-001"}`,
			check: func(t *testing.T, got map[string]any, _ providers.Usage) {
				assert.Equal(t, "content_filter", providertest.Dig(got, "choices", 0, "finish_reason"))
				assert.Equal(t, "gemini-2.0-flash-001", got["model"])
			},
		},
		{
			name:     "a blocked prompt is one filtered empty choice",
			body:     `{"messages":[{"role":"user","content":"Hi"}]}`,
			scripted: `{"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":4,"totalTokenCount":4}}`,
			check: func(t *testing.T, got map[string]any, usage providers.Usage) {
				assert.Equal(t, []any{map[string]any{"index": 0.0, "logprobs": nil, "finish_reason": "content_filter",
					"message": map[string]any{"role": "assistant", "content": ""}}}, got["choices"])
				assert.Equal(t, providers.Usage{PromptTokens: 4, TotalTokens: 4}, usage)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewGemini(t)
			s.SetUsageDetails(3, 5)
			if tc.scripted != "" {
				s.Script(providertest.Answer{Body: tc.scripted})
			}
			target := standInTarget(s)
			target.StrictOpenAI = tc.strict
			resp, err := gemini.New(nil).Chat(context.Background(), target, chatCall(tc.body))
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.Status)
			tc.check(t, providertest.Decode(t, resp.Body), resp.Usage)
		})
	}
}

// A whole tool round trip through the stand-in, which holds the second request to Gemini's
// rules: a function response per call, and thinking models' thought signatures.
func TestGeminiToolRoundTrip(t *testing.T) {
	s := providertest.NewGemini(t)
	g := gemini.New(nil)
	tools := `"tools":[{"type":"function","function":{"name":"get_time"}}],"thinking":{"type":"enabled","budget_tokens":1024}`
	first, err := g.Chat(context.Background(), standInTarget(s), chatCall(`{"messages":[{"role":"user","content":"Time?"}],`+tools+`}`))
	require.NoError(t, err)
	msg := providertest.Dig(providertest.Decode(t, first.Body), "choices", 0, "message")
	call := providertest.Dig(msg, "tool_calls", 0)
	require.NotNil(t, call)
	history, err := json.Marshal([]any{
		map[string]any{"role": "user", "content": "Time?"},
		map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{call}},
		map[string]any{"role": "tool", "tool_call_id": providertest.Dig(call, "id"), "content": "noon"},
	})
	require.NoError(t, err)
	second, err := g.Chat(context.Background(), standInTarget(s), chatCall(`{"messages":`+string(history)+`,`+tools+`}`))
	require.NoError(t, err)
	assert.Equal(t, providertest.Reply, providertest.Dig(providertest.Decode(t, second.Body), "choices", 0, "message", "content"))
	assert.Equal(t, "get_time", providertest.Dig(s.LastRequest().JSON(), "contents", 2, "parts", 0, "functionResponse", "name"))
}

func TestGeminiStream(t *testing.T) {
	clock := `{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"zone":{"type":"string"}}}}}`
	cases := []struct {
		name  string
		body  string
		check func(t *testing.T, chunks []map[string]any, usage providers.Usage)
	}{
		{
			name: "text: a role chunk first, the pieces in order, the finish reason, then usage when asked",
			body: `{"messages":[{"role":"user","content":"Say hello"}],"stream_options":{"include_usage":true}}`,
			check: func(t *testing.T, chunks []map[string]any, usage providers.Usage) {
				require.Len(t, chunks, 1+4+1+1)
				for _, c := range chunks {
					assert.Equal(t, "chat.completion.chunk", c["object"])
					assert.Equal(t, "chatcmpl-standin1", c["id"])
					assert.Equal(t, "gemini-2.0-flash", c["model"])
				}
				assert.Equal(t, map[string]any{"role": "assistant", "content": ""}, providertest.Dig(chunks[0], "choices", 0, "delta"))
				assert.Equal(t, providertest.StreamText(4), providertest.Content(chunks))
				assert.Equal(t, "stop", providertest.Dig(chunks[5], "choices", 0, "finish_reason"))
				assert.Equal(t, []any{}, chunks[6]["choices"])
				assert.Equal(t, map[string]any{"prompt_tokens": 2.0, "completion_tokens": 4.0, "total_tokens": 6.0,
					"prompt_tokens_details": map[string]any{"cached_tokens": 0.0}}, chunks[6]["usage"])
				assert.Equal(t, providers.Usage{PromptTokens: 2, CompletionTokens: 4, TotalTokens: 6}, usage)
			},
		},
		{
			name: "a function call arrives whole in one tool_calls delta",
			body: `{"messages":[{"role":"user","content":"Time?"}],"tools":[` + clock + `]}`,
			check: func(t *testing.T, chunks []map[string]any, _ providers.Usage) {
				require.Len(t, chunks, 3)
				call := providertest.Dig(chunks[1], "choices", 0, "delta", "tool_calls", 0)
				assert.Equal(t, 0.0, providertest.Dig(call, "index"))
				assert.Regexp(t, `^call_`, providertest.Dig(call, "id"))
				assert.Equal(t, "function", providertest.Dig(call, "type"))
				assert.Equal(t, map[string]any{"name": "get_time", "arguments": `{"zone":"stand-in"}`}, providertest.Dig(call, "function"))
				assert.Equal(t, "tool_calls", providertest.Dig(chunks[2], "choices", 0, "finish_reason"))
			},
		},
		{
			name: "n candidates: each choice announced, streamed and finished",
			body: `{"messages":[{"role":"user","content":"Hi"}],"n":2}`,
			check: func(t *testing.T, chunks []map[string]any, _ providers.Usage) {
				roles, finishes := map[float64]bool{}, map[float64]string{}
				for _, c := range chunks {
					i := providertest.Dig(c, "choices", 0, "index").(float64)
					if providertest.Dig(c, "choices", 0, "delta", "role") == "assistant" {
						assert.False(t, roles[i], "one role chunk per choice")
						roles[i] = true
					}
					if f, ok := providertest.Dig(c, "choices", 0, "finish_reason").(string); ok {
						finishes[i] = f
					}
				}
				assert.Equal(t, map[float64]bool{0: true, 1: true}, roles)
				assert.Equal(t, map[float64]string{0: "stop", 1: "stop"}, finishes)
			},
		},
		{
			name: "thoughts as content_blocks when the target is not strict",
			body: `{"messages":[{"role":"user","content":"Hi"}],"thinking":{"type":"enabled","budget_tokens":1024}}`,
			check: func(t *testing.T, chunks []map[string]any, _ providers.Usage) {
				assert.Equal(t, []any{map[string]any{"index": 0.0, "delta": map[string]any{"thinking": providertest.GeminiThought}}},
					providertest.Dig(chunks[1], "choices", 0, "delta", "content_blocks"))
				assert.Equal(t, providertest.StreamText(4), providertest.Content(chunks))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewGemini(t)
			s.SetStream(providertest.StreamPlan{Chunks: 4})
			call := chatCall(tc.body)
			call.Stream = true
			st, err := gemini.New(nil).ChatStream(context.Background(), standInTarget(s), call)
			require.NoError(t, err)
			defer st.Close()
			chunks, err := providertest.Drain(t, st)
			require.NoError(t, err)
			tc.check(t, chunks, st.Usage())
		})
	}
}

func TestGeminiStreamFailures(t *testing.T) {
	cases := []struct {
		name   string
		plan   providertest.StreamPlan
		chunks int
		check  func(t *testing.T, err error)
	}{
		{
			name: "an error object mid-stream is an upstream error with its code",
			plan: providertest.StreamPlan{Chunks: 5, ErrorAfter: 2}, chunks: 3,
			check: func(t *testing.T, err error) {
				var ue *providers.UpstreamError
				require.ErrorAs(t, err, &ue)
				assert.Equal(t, 503, ue.Status)
				body := providertest.Decode(t, ue.Body)
				assert.Equal(t, "UNAVAILABLE", providertest.Dig(body, "error", "code"))
				assert.Equal(t, "The model is overloaded. Please try again later.", providertest.Dig(body, "error", "message"))
			},
		},
		{
			name: "a connection cut mid-stream is a connection error",
			plan: providertest.StreamPlan{Chunks: 5, CutAfter: 2}, chunks: 3,
			check: func(t *testing.T, err error) {
				var ce *providers.ConnectionError
				require.ErrorAs(t, err, &ce)
				assert.Equal(t, "google", ce.Provider)
			},
		},
		{
			name: "a stream that ends cleanly before any finishReason is an error, not the end",
			plan: providertest.StreamPlan{Chunks: 3, OmitDone: true}, chunks: 4,
			check: func(t *testing.T, err error) {
				var ce *providers.ConnectionError
				require.ErrorAs(t, err, &ce)
				assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := providertest.NewGemini(t)
			s.SetStream(tc.plan)
			st, err := gemini.New(nil).ChatStream(context.Background(), standInTarget(s), chatCall(`{"messages":[{"role":"user","content":"Hi"}]}`))
			require.NoError(t, err)
			defer st.Close()
			chunks, err := providertest.Drain(t, st)
			require.Error(t, err, "never a silent end")
			assert.Len(t, chunks, tc.chunks)
			assert.NotContains(t, err.Error(), testKey)
			tc.check(t, err)
		})
	}
}

func TestGeminiErrors(t *testing.T) {
	retryInfo := `{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED","details":[` +
		`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},` +
		`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}`
	cases := []struct {
		name       string
		answer     *providertest.Answer // nil: the stand-in's own refusal of a wrong key
		status     int
		retryAfter time.Duration
		typ, code  string
		message    string
	}{
		{"400 for a key Google does not know", nil, 400, 0, "invalid_request_error", "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."},
		{"403 quoting the key is scrubbed", &providertest.Answer{Status: 403, Body: providertest.GeminiErrorBody(403, "PERMISSION_DENIED", "Key "+testKey+" is suspended")},
			403, 0, "permission_error", "PERMISSION_DENIED", "Key [redacted] is suspended"},
		{"429 with RetryInfo", &providertest.Answer{Status: 429, Body: retryInfo}, 429, 30 * time.Second, "rate_limit_error", "RESOURCE_EXHAUSTED", "You exceeded your current quota."},
		{"429 with Retry-After", &providertest.Answer{Status: 429, Header: http.Header{"Retry-After": {"4"}}, Body: providertest.GeminiErrorBody(429, "RESOURCE_EXHAUSTED", "Slow down")},
			429, 4 * time.Second, "rate_limit_error", "RESOURCE_EXHAUSTED", "Slow down"},
		{"503 overloaded", &providertest.Answer{Status: 503, Body: providertest.GeminiErrorBody(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")},
			503, 0, "api_error", "UNAVAILABLE", "The model is overloaded. Please try again later."},
	}
	for _, tc := range cases {
		for _, stream := range []bool{false, true} {
			name := tc.name
			if stream {
				name += ", streamed"
			}
			t.Run(name, func(t *testing.T) {
				s := providertest.NewGemini(t)
				target := standInTarget(s)
				if tc.answer != nil {
					s.Script(*tc.answer)
				} else {
					s.RequireKey("AIzaSyAnotherKey")
				}
				g := gemini.New(nil)
				call := chatCall(`{"messages":[{"role":"user","content":"Hi"}]}`)
				var err error
				if stream {
					_, err = g.ChatStream(context.Background(), target, call)
				} else {
					_, err = g.Chat(context.Background(), target, call)
				}
				var ue *providers.UpstreamError
				require.ErrorAs(t, err, &ue)
				assert.Equal(t, tc.status, ue.Status)
				assert.Equal(t, tc.retryAfter, ue.RetryAfter)
				assert.Equal(t, "google", ue.Provider)
				body := providertest.Decode(t, ue.Body)
				assert.Equal(t, tc.typ, providertest.Dig(body, "error", "type"))
				assert.Equal(t, tc.code, providertest.Dig(body, "error", "code"))
				assert.Equal(t, tc.message, providertest.Dig(body, "error", "message"))
				assert.NotContains(t, string(ue.Body), testKey)
				assert.NotContains(t, err.Error(), testKey)
			})
		}
	}
}

func TestGeminiConnectionFailures(t *testing.T) {
	t.Run("an unreachable provider is a connection error without the key", func(t *testing.T) {
		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close()
		_, err := gemini.New(nil).Chat(context.Background(), providers.Target{BaseURL: closed.URL, APIKey: testKey},
			chatCall(`{"messages":[{"role":"user","content":"Hi"}]}`))
		var ce *providers.ConnectionError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, "google", ce.Provider)
		assert.NotContains(t, err.Error(), testKey)
	})
	t.Run("cancelling mid-stream ends the stream and reaches the provider", func(t *testing.T) {
		s := providertest.NewGemini(t)
		s.SetStream(providertest.StreamPlan{Chunks: 100, Delay: 20 * time.Millisecond})
		ctx, cancel := context.WithCancel(context.Background())
		st, err := gemini.New(nil).ChatStream(ctx, standInTarget(s), chatCall(`{"messages":[{"role":"user","content":"Hi"}]}`))
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
		case <-s.Disconnects():
		case <-time.After(time.Second):
			t.Fatal("the stand-in did not see the cancel within a second")
		}
	})
}

func TestGeminiPassThrough(t *testing.T) {
	s := providertest.NewGemini(t)
	g := gemini.New(nil)

	resp, err := g.PassThrough(context.Background(), standInTarget(s), providers.Call{Endpoint: providers.EndpointPassThrough,
		Method: http.MethodGet, Path: "/models", Query: "pageSize=5"})
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"method": "GET", "path": "/v1beta/models", "query": "pageSize=5", "body": ""}, providertest.Decode(t, raw))
	assert.Equal(t, testKey, s.LastRequest().Header.Get("X-Goog-Api-Key"))

	t.Run("a refusal comes back unchanged, not as an error", func(t *testing.T) {
		resp, err := g.PassThrough(context.Background(), standInTarget(s), providers.Call{Method: http.MethodPost,
			Path: "/models/text-embedding-004:embedText", Body: json.RawMessage(`{}`)})
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		raw, _ := io.ReadAll(resp.Body)
		assert.Equal(t, "NOT_FOUND", providertest.Dig(providertest.Decode(t, raw), "error", "status"))
	})
}
