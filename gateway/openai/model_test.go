package openai

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

func ptr[T any](v T) *T { return &v }

// TestParseChatReadsTheModel: one pass fills every field an adapter translates, and keeps the
// members it does not know by name, in order.
func TestParseChatReadsTheModel(t *testing.T) {
	body := `{"model":"gpt-4o","messages":[` +
		`{"role":"system","content":[{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}]},` +
		`{"role":"user","name":"ann","content":[{"type":"text","text":"Look"},` +
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA","detail":"high"}},` +
		`{"type":"input_audio","input_audio":{"data":"UklGR","format":"wav"}},` +
		`{"type":"file","file":{"file_id":"file-1","filename":"a.pdf"}},` +
		`{"type":"image_url","image_url":"https://example.com/b.png"}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"Hmm.","signature":"sig"},{"type":"redacted_thinking","data":"opaque"},{"type":"refusal","refusal":"No."}],` +
		`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"look","arguments":"{\"q\":1}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"found"},` +
		`{"role":"assistant","content":"ok","function_call":{"name":"old","arguments":"{}"}},` +
		`{"role":"function","name":"old","content":"done"}],` +
		`"x_first":1,` +
		`"temperature":0.5,"top_p":0.9,"presence_penalty":-1,"frequency_penalty":1.5,"seed":-7,"stop":"END",` +
		`"logprobs":true,"top_logprobs":3,"logit_bias":{"50256":-100},"n":2,"max_tokens":10,"max_completion_tokens":20,` +
		`"stream":true,"stream_options":{"include_usage":true},"user":"u-1","metadata":{"k":"v"},` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object"}}},` +
		`"tools":[{"type":"function","function":{"name":"look","description":"Look it up","parameters":{"type":"object"},"strict":true}}],` +
		`"tool_choice":{"type":"function","function":{"name":"look"}},"parallel_tool_calls":false,` +
		`"functions":[{"name":"old","parameters":{"type":"object"}}],"function_call":"auto",` +
		`"thinking":{"type":"enabled","budget_tokens":2048},"reasoning_effort":"low","x_vendor":{"k":[1,2]}}`
	req, err := ParseChat([]byte(body))
	require.NoError(t, err)

	assert.Equal(t, "gpt-4o", req.Model)
	assert.Equal(t, ptr(0.5), req.Temperature)
	assert.Equal(t, ptr(0.9), req.TopP)
	assert.Equal(t, ptr(-1.0), req.PresencePenalty)
	assert.Equal(t, ptr(1.5), req.FrequencyPenalty)
	assert.Equal(t, ptr(int64(-7)), req.Seed)
	assert.Equal(t, []string{"END"}, req.Stop, "a string stop is one sequence")
	assert.True(t, req.Logprobs)
	assert.Equal(t, ptr(3), req.TopLogprobs)
	assert.Equal(t, map[string]float64{"50256": -100}, req.LogitBias)
	assert.Equal(t, 2, req.N)
	assert.Equal(t, 20, req.OutputLimit())
	assert.True(t, req.Stream)
	assert.Equal(t, StreamOptions{IncludeUsage: true}, req.StreamOptions)
	assert.Equal(t, "u-1", req.User)
	assert.JSONEq(t, `{"k":"v"}`, string(req.Metadata))
	require.NotNil(t, req.ResponseFormat)
	assert.Equal(t, "json_schema", req.ResponseFormat.Type)
	assert.JSONEq(t, `{"type":"object"}`, string(req.ResponseFormat.Schema))
	assert.JSONEq(t, `{"type":"json_schema","json_schema":{"name":"s","schema":{"type":"object"}}}`, string(req.ResponseFormat.Raw))
	assert.Equal(t, []Tool{{Type: "function", Function: Function{Name: "look", Description: "Look it up",
		Parameters: json.RawMessage(`{"type":"object"}`), Strict: true}}}, req.Tools)
	assert.Equal(t, ToolChoice{Mode: ChoiceFunction, Name: "look"}, req.ToolChoice)
	assert.Equal(t, ptr(false), req.ParallelToolCalls)
	assert.Equal(t, []Function{{Name: "old", Parameters: json.RawMessage(`{"type":"object"}`)}}, req.Functions)
	assert.Equal(t, ToolChoice{Mode: ChoiceAuto}, req.FunctionCall)
	assert.Equal(t, ToolChoice{Mode: ChoiceFunction, Name: "look"}, req.Choice(), "tool_choice wins over function_call")
	require.NotNil(t, req.Thinking)
	assert.Equal(t, Thinking{Type: "enabled", BudgetTokens: ptr(2048), Raw: json.RawMessage(`{"type":"enabled","budget_tokens":2048}`)}, *req.Thinking)
	assert.Equal(t, Members{
		{Name: "x_first", Value: json.RawMessage(`1`)},
		{Name: "reasoning_effort", Value: json.RawMessage(`"low"`)},
		{Name: "x_vendor", Value: json.RawMessage(`{"k":[1,2]}`)},
	}, req.Extra, "unknown members by name, in the body's order")
	effort, ok := req.Extra.Get("reasoning_effort")
	assert.True(t, ok)
	assert.Equal(t, `"low"`, string(effort))

	require.Len(t, req.Messages, 6)
	assert.Equal(t, []Part{{Type: PartText, Text: "Be brief.", CacheControl: json.RawMessage(`{"type":"ephemeral"}`)}}, req.Messages[0].Parts())
	assert.Equal(t, []Part{
		{Type: PartText, Text: "Look"},
		{Type: PartImageURL, ImageURL: &ImageURL{URL: "data:image/png;base64,AAAA", Detail: "high"}},
		{Type: PartInputAudio, InputAudio: &InputAudio{Data: "UklGR", Format: "wav"}},
		{Type: PartFile, File: &File{FileID: "file-1", Filename: "a.pdf"}},
		{Type: PartImageURL, ImageURL: &ImageURL{URL: "https://example.com/b.png"}},
	}, req.Messages[1].Content)
	assert.Equal(t, "ann", req.Messages[1].Name)
	assert.Equal(t, []Part{
		{Type: PartThinking, Thinking: "Hmm.", Signature: "sig"},
		{Type: PartRedactedThinking, Data: "opaque"},
		{Type: PartRefusal, Refusal: "No."},
	}, req.Messages[2].Content)
	assert.Equal(t, []ToolCall{{ID: "call_1", Type: "function", Function: FunctionCall{Name: "look", Arguments: `{"q":1}`}}}, req.Messages[2].ToolCalls)
	assert.Equal(t, "call_1", req.Messages[3].ToolCallID)
	assert.Equal(t, []Part{{Type: PartText, Text: "found"}}, req.Messages[3].Parts(), "a string content is one text part")
	assert.Nil(t, req.Messages[3].Content)
	assert.Equal(t, &FunctionCall{Name: "old", Arguments: "{}"}, req.Messages[4].FunctionCall)
	assert.Equal(t, "old", req.Messages[5].Name)
}

func TestChatChoiceFallsBackToFunctionCall(t *testing.T) {
	req, err := ParseChat([]byte(chat(`"functions":[{"name":"f"}],"function_call":{"name":"f"}`)))
	require.NoError(t, err)
	assert.Equal(t, ToolChoice{}, req.ToolChoice)
	assert.Equal(t, ToolChoice{Mode: ChoiceFunction, Name: "f"}, req.Choice())

	req, err = ParseChat([]byte(chat(`"stop":["a","b"],"tool_choice":"none"`)))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, req.Stop)
	assert.Equal(t, ToolChoice{Mode: ChoiceNone}, req.Choice())
	assert.Nil(t, req.Extra)
	assert.Nil(t, req.Temperature, "absent is nil")
}

// TestChatRequestWithOverrides: an override changes the body only where it says, reads only the
// overridden members again, and gives what parsing the overridden body gives.
func TestChatRequestWithOverrides(t *testing.T) {
	body := "{\"model\" : \"gpt-4o\",\n \"x_vendor\": {\"b\" : [1, 2.50]},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":1,\"stream\":true}"
	req, err := ParseChat([]byte(body))
	require.NoError(t, err)

	cases := []struct {
		name      string
		overrides map[string]any
		wantBody  string
		check     func(t *testing.T, r *ChatRequest)
	}{
		{
			name:      "a model",
			overrides: map[string]any{"model": "gpt-4o-mini"},
			wantBody:  "{\"model\" : \"gpt-4o-mini\",\n \"x_vendor\": {\"b\" : [1, 2.50]},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":1,\"stream\":true}",
			check: func(t *testing.T, r *ChatRequest) {
				assert.Equal(t, "gpt-4o-mini", r.Model)
				assert.Equal(t, ptr(1.0), r.Temperature)
			},
		},
		{
			name:      "replaced and appended members",
			overrides: map[string]any{"temperature": 0.2, "max_tokens": 7, "stream_options": map[string]any{"include_usage": true}},
			wantBody:  "{\"model\" : \"gpt-4o\",\n \"x_vendor\": {\"b\" : [1, 2.50]},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":0.2,\"stream\":true,\"max_tokens\":7,\"stream_options\":{\"include_usage\":true}}",
			check: func(t *testing.T, r *ChatRequest) {
				assert.Equal(t, ptr(0.2), r.Temperature)
				assert.Equal(t, 7, r.MaxTokens)
				assert.True(t, r.StreamOptions.IncludeUsage)
			},
		},
		{
			name:      "null unsets a field",
			overrides: map[string]any{"temperature": nil},
			wantBody:  "{\"model\" : \"gpt-4o\",\n \"x_vendor\": {\"b\" : [1, 2.50]},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":null,\"stream\":true}",
			check: func(t *testing.T, r *ChatRequest) {
				assert.Nil(t, r.Temperature)
			},
		},
		{
			name:      "unknown members land in Extra",
			overrides: map[string]any{"x_vendor": "v", "top_k": 40},
			wantBody:  "{\"model\" : \"gpt-4o\",\n \"x_vendor\": \"v\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"temperature\":1,\"stream\":true,\"top_k\":40}",
			check: func(t *testing.T, r *ChatRequest) {
				assert.Equal(t, Members{{Name: "x_vendor", Value: json.RawMessage(`"v"`)}, {Name: "top_k", Value: json.RawMessage(`40`)}}, r.Extra)
			},
		},
		{
			name:      "messages",
			overrides: map[string]any{"messages": []map[string]any{{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}}},
			wantBody:  "{\"model\" : \"gpt-4o\",\n \"x_vendor\": {\"b\" : [1, 2.50]},\"messages\":[{\"content\":\"Be brief.\",\"role\":\"system\"},{\"content\":\"hi\",\"role\":\"user\"}],\"temperature\":1,\"stream\":true}",
			check: func(t *testing.T, r *ChatRequest) {
				require.Len(t, r.Messages, 2)
				assert.Equal(t, "Be brief.", r.Messages[0].Text)
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := req.WithOverrides(tc.overrides)
			require.NoError(t, err)
			assert.Equal(t, tc.wantBody, string(got.Raw))
			tc.check(t, got)
			again, err := ParseChat(got.Raw)
			require.NoError(t, err)
			assert.Equal(t, again, got, "the same as parsing the overridden body")
			assert.Equal(t, body, string(req.Raw), "the request overridden is left as it was")
			assert.Equal(t, "gpt-4o", req.Model)
		})
	}

	same, err := req.WithOverrides(nil)
	require.NoError(t, err)
	assert.Same(t, req, same, "nothing to override")
}

func TestWithOverridesRefusesWhatParsingRefuses(t *testing.T) {
	req, err := ParseChat([]byte(chat(`"tools":` + tools(2) + `,"tool_choice":{"type":"function","function":{"name":"f1"}},"stream":true,"stream_options":{"include_usage":true}`)))
	require.NoError(t, err)
	cases := []struct {
		name      string
		overrides map[string]any
		param     string
		msg       string
	}{
		{"out of bounds", map[string]any{"temperature": 5}, "override_params.temperature", "between 0 and 2"},
		{"an empty model", map[string]any{"model": ""}, "override_params.model", "must not be empty"},
		{"tools without the chosen one", map[string]any{"tools": json.RawMessage(tools(1))}, "override_params.tool_choice.function.name", "not the name of one of the tools"},
		{"stream off with stream_options", map[string]any{"stream": false}, "override_params.stream_options", "only allowed when stream is true"},
		{"a bad message", map[string]any{"messages": []any{map[string]any{"role": "robot"}}}, "override_params.messages[0].role", "must be one of"},
		{"a value JSON cannot hold", map[string]any{"n": func() {}}, "override_params.n", "cannot be encoded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := req.WithOverrides(tc.overrides)
			var de *domain.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, domain.CodeInvalid, de.Code)
			assert.Equal(t, tc.param, de.Param)
			assert.Contains(t, de.Message, tc.msg)
		})
	}
}

func TestOtherRequestsWithOverrides(t *testing.T) {
	t.Run("completion", func(t *testing.T) {
		req, err := ParseCompletion([]byte(completion(`"best_of":3,"n":2`)))
		require.NoError(t, err)
		got, err := req.WithOverrides(map[string]any{"model": "m2", "n": 1})
		require.NoError(t, err)
		assert.Equal(t, "m2", got.Model)
		assert.Equal(t, 1, got.N)
		again, err := ParseCompletion(got.Raw)
		require.NoError(t, err)
		assert.Equal(t, again, got)
		_, err = req.WithOverrides(map[string]any{"n": 3})
		requireInvalid(t, err, "override_params.best_of", "greater than n")
		_, err = req.WithOverrides(map[string]any{"stream": true})
		requireInvalid(t, err, "override_params.best_of", "cannot be used with stream")
	})
	t.Run("embedding", func(t *testing.T) {
		req, err := ParseEmbedding([]byte(`{"model":"e","input":"a","input_type":"query"}`))
		require.NoError(t, err)
		assert.Equal(t, Members{{Name: "input_type", Value: json.RawMessage(`"query"`)}}, req.Extra)
		got, err := req.WithOverrides(map[string]any{"dimensions": 256, "input_type": "document"})
		require.NoError(t, err)
		assert.Equal(t, 256, got.Dimensions)
		assert.Equal(t, `{"model":"e","input":"a","input_type":"document","dimensions":256}`, string(got.Raw))
		again, err := ParseEmbedding(got.Raw)
		require.NoError(t, err)
		assert.Equal(t, again, got)
	})
	t.Run("rerank", func(t *testing.T) {
		req, err := ParseRerank([]byte(`{"model":"r","query":"q","documents":["a"],"priority":1}`))
		require.NoError(t, err)
		got, err := req.WithOverrides(map[string]any{"top_n": 1, "query": "q2"})
		require.NoError(t, err)
		assert.Equal(t, "q2", got.Query)
		assert.Equal(t, 1, got.TopN)
		again, err := ParseRerank(got.Raw)
		require.NoError(t, err)
		assert.Equal(t, again, got)
		_, err = req.WithOverrides(map[string]any{"query": nil})
		requireInvalid(t, err, "override_params.query", "required")
	})
	t.Run("a request built in Go", func(t *testing.T) {
		req := &ChatRequest{Model: "m", Raw: json.RawMessage(chat(""))}
		got, err := req.WithOverrides(map[string]any{"model": "m2"})
		require.NoError(t, err)
		assert.Equal(t, "m2", got.Model)
		_, err = (&ChatRequest{}).WithOverrides(map[string]any{"model": "m2"})
		requireInvalid(t, err, "", "JSON object")
	})
}
