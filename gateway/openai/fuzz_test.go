package openai

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

// The fuzz tests check the parsers against an independent reading of the same body: whatever a
// parser accepts is decoded again with encoding/json into plain maps, and every bound is checked
// there. Their seed corpora are in testdata/fuzz.

var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// generic decodes an accepted body into plain values, numbers kept as json.Number.
func generic(t *testing.T, body []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m), "an accepted body is a JSON object")
	require.NotNil(t, m)
	return m
}

// number returns m[key] when it is a number, failing when it is something else but null.
func number(t *testing.T, m map[string]any, key string) (float64, bool) {
	t.Helper()
	v, ok := m[key]
	if !ok || v == nil {
		return 0, false
	}
	n, isNum := v.(json.Number)
	require.True(t, isNum, "%s accepted as %T", key, v)
	f, err := n.Float64()
	require.NoError(t, err, key)
	require.False(t, math.IsInf(f, 0) || math.IsNaN(f), "%s is finite", key)
	return f, true
}

func integer(t *testing.T, m map[string]any, key string) (float64, bool) {
	t.Helper()
	f, ok := number(t, m, key)
	if ok {
		require.Equal(t, math.Trunc(f), f, "%s is an integer", key)
	}
	return f, ok
}

func inRange(t *testing.T, m map[string]any, key string, lo, hi float64) {
	t.Helper()
	if f, ok := number(t, m, key); ok {
		require.True(t, f >= lo && f <= hi, "%s = %v is within %v..%v", key, f, lo, hi)
	}
}

// decodeNumbers decodes valid JSON keeping numbers as text: 1E1000 is valid JSON that no
// float64 holds.
func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v), "%q", b)
	return v
}

func isTrue(m map[string]any, key string) bool { return m[key] == true }

func requireRefusal(t *testing.T, err error) {
	t.Helper()
	var de *domain.Error
	require.ErrorAs(t, err, &de, "every refusal is a domain error")
	require.Equal(t, domain.CodeInvalid, de.Code)
	require.NotEmpty(t, de.Message)
}

// commonInvariants are the bounds chat and text completions share.
func commonInvariants(t *testing.T, m map[string]any, body []byte, raw json.RawMessage, model string, n int, stream, includeUsage bool) {
	t.Helper()
	require.Equal(t, body, []byte(raw), "the raw body is the body")
	s, ok := m["model"].(string)
	require.True(t, ok && s != "", "model is a non-empty string")
	require.Equal(t, s, model)

	if f, ok := integer(t, m, "n"); ok {
		require.True(t, f >= 1 && f <= 128, "n = %v", f)
		require.Equal(t, int(f), n)
	} else {
		require.Equal(t, 1, n)
	}
	inRange(t, m, "temperature", 0, 2)
	inRange(t, m, "top_p", 0, 1)
	inRange(t, m, "frequency_penalty", -2, 2)
	inRange(t, m, "presence_penalty", -2, 2)
	if lb, ok := m["logit_bias"].(map[string]any); ok {
		for tok := range lb {
			inRange(t, lb, tok, -100, 100)
		}
	}
	switch stop := m["stop"].(type) {
	case nil, string:
	case []any:
		require.LessOrEqual(t, len(stop), 4, "stop")
		for _, s := range stop {
			require.IsType(t, "", s, "stop items are strings")
		}
	default:
		t.Fatalf("stop accepted as %T", stop)
	}
	require.Equal(t, isTrue(m, "stream"), stream)
	if so := m["stream_options"]; so != nil {
		require.True(t, stream, "stream_options only with stream")
		require.Equal(t, isTrue(so.(map[string]any), "include_usage"), includeUsage)
	}
}

func FuzzParseChat(f *testing.F) {
	roles := map[string]bool{"system": true, "developer": true, "user": true, "assistant": true, "tool": true, "function": true}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseChat(body)
		if err != nil {
			requireRefusal(t, err)
			return
		}
		m := generic(t, body)
		commonInvariants(t, m, body, req.Raw, req.Model, req.N, req.Stream, req.StreamOptions.IncludeUsage)

		msgs, ok := m["messages"].([]any)
		require.True(t, ok && len(msgs) >= 1, "at least one message")
		require.Len(t, req.Messages, len(msgs))
		for i, raw := range msgs {
			msg, ok := raw.(map[string]any)
			require.True(t, ok, "messages are objects")
			role, _ := msg["role"].(string)
			require.True(t, roles[role], "role %q", role)
			require.Equal(t, role, req.Messages[i].Role)
			if role == "tool" {
				id, _ := msg["tool_call_id"].(string)
				require.NotEmpty(t, id, "a tool message names its call")
			}
		}

		if f, ok := integer(t, m, "top_logprobs"); ok {
			require.True(t, f >= 0 && f <= 20, "top_logprobs = %v", f)
			require.True(t, isTrue(m, "logprobs"), "top_logprobs needs logprobs")
		}
		for _, key := range []string{"max_tokens", "max_completion_tokens"} {
			if f, ok := integer(t, m, key); ok {
				require.GreaterOrEqual(t, f, 1.0, key)
			}
		}
		var names []string
		if ts, ok := m["tools"].([]any); ok {
			require.LessOrEqual(t, len(ts), 128, "tools")
			for _, tl := range ts {
				tool := tl.(map[string]any)
				require.Equal(t, "function", tool["type"])
				name, _ := tool["function"].(map[string]any)["name"].(string)
				require.Regexp(t, functionName, name)
				names = append(names, name)
			}
		}
		require.Equal(t, len(names), len(req.Tools))
		for i, name := range names {
			require.Equal(t, name, req.Tools[i].Function.Name)
		}
		if fs, ok := m["functions"].([]any); ok {
			require.True(t, len(fs) >= 1 && len(fs) <= 128, "functions")
		}
		if tc, ok := m["tool_choice"].(map[string]any); ok {
			name, _ := tc["function"].(map[string]any)["name"].(string)
			require.Contains(t, req.ToolNames(), name, "tool_choice names a tool")
			require.Equal(t, ToolChoice{Mode: ChoiceFunction, Name: name}, req.ToolChoice)
		}
		require.GreaterOrEqual(t, EstimateTokens(req), tokensPerReply+tokensPerMessage*len(req.Messages))

		// The model holds what the body says.
		for key, got := range map[string]*float64{"temperature": req.Temperature, "top_p": req.TopP,
			"presence_penalty": req.PresencePenalty, "frequency_penalty": req.FrequencyPenalty} {
			if f, ok := number(t, m, key); ok {
				require.NotNil(t, got, key)
				require.Equal(t, f, *got, key)
			} else {
				require.Nil(t, got, key)
			}
		}
		switch stop := m["stop"].(type) {
		case string:
			require.Equal(t, []string{stop}, req.Stop)
		case []any:
			require.Len(t, req.Stop, len(stop))
		default:
			require.Nil(t, req.Stop)
		}
		for i, raw := range msgs {
			if parts, ok := raw.(map[string]any)["content"].([]any); ok {
				require.Len(t, req.Messages[i].Content, len(parts))
				for j, p := range parts {
					require.Equal(t, p.(map[string]any)["type"], req.Messages[i].Content[j].Type)
				}
			}
		}
		unknown := map[string]bool{}
		for k := range m {
			if !chatKnown[k] {
				unknown[k] = true
			}
		}
		require.Len(t, req.Extra, len(unknown))
		for _, e := range req.Extra {
			require.True(t, unknown[e.Name], "%s is unknown", e.Name)
		}

		// An override keeps an accepted body accepted, with the overridden value.
		over, err := WithOverrides(body, map[string]any{"model": "override-model"})
		require.NoError(t, err)
		again, err := ParseChat(over)
		require.NoError(t, err)
		assert.Equal(t, "override-model", again.Model)
		assert.Equal(t, req.N, again.N)
		assert.Equal(t, req.Tools, again.Tools)

		// The parsed request overrides itself into what parsing the overridden body gives.
		overridden, err := req.WithOverrides(map[string]any{"model": "override-model"})
		require.NoError(t, err)
		require.Equal(t, again, overridden)
		require.Equal(t, string(body), string(req.Raw), "the original is unchanged")
	})
}

func FuzzParseCompletion(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := ParseCompletion(body)
		if err != nil {
			requireRefusal(t, err)
			return
		}
		m := generic(t, body)
		commonInvariants(t, m, body, req.Raw, req.Model, req.N, req.Stream, req.StreamOptions.IncludeUsage)

		switch p := m["prompt"].(type) {
		case string:
		case []any:
			require.NotEmpty(t, p, "prompt")
			for _, item := range p {
				switch it := item.(type) {
				case string:
				case json.Number:
					f, err := it.Float64()
					require.NoError(t, err)
					require.True(t, f >= 0 && f == math.Trunc(f), "token id %v", f)
				case []any:
					require.NotEmpty(t, it, "token arrays")
				default:
					t.Fatalf("prompt item accepted as %T", it)
				}
			}
		default:
			t.Fatalf("prompt accepted as %T", p)
		}
		if f, ok := integer(t, m, "best_of"); ok {
			require.True(t, f >= 0 && f <= 20, "best_of = %v", f)
			require.Equal(t, int(f), req.BestOf)
			if n, ok := integer(t, m, "n"); ok && !(f == 1 && n == 1) {
				require.Greater(t, f, n, "best_of exceeds n")
			}
			if f > 1 {
				require.False(t, req.Stream, "best_of is not streamed")
			}
		}
		if f, ok := integer(t, m, "logprobs"); ok {
			require.True(t, f >= 0 && f <= 5, "logprobs = %v", f)
		}
		if f, ok := integer(t, m, "max_tokens"); ok {
			require.GreaterOrEqual(t, f, 0.0)
			require.Equal(t, int(f), req.MaxTokens)
		} else {
			require.Equal(t, 16, req.MaxTokens)
		}
		require.GreaterOrEqual(t, EstimateCompletionTokens(req), 0)

		// The parsed request overrides itself into what parsing the overridden body gives.
		overridden, err := req.WithOverrides(map[string]any{"model": "override-model"})
		require.NoError(t, err)
		over, err := WithOverrides(body, map[string]any{"model": "override-model"})
		require.NoError(t, err)
		again, err := ParseCompletion(over)
		require.NoError(t, err)
		require.Equal(t, again, overridden)
		require.Equal(t, string(body), string(req.Raw), "the original is unchanged")
	})
}

// FuzzWithOverrides: a body is overridden exactly when it is a JSON object, and the result reads
// as the body with that one member set.
func FuzzWithOverrides(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte, key string, value []byte) {
		// Override keys come from a config, which is JSON and so valid UTF-8.
		if !json.Valid(value) || !utf8.ValidString(key) {
			return
		}
		isObject := json.Valid(body) && bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("{"))
		out, err := WithOverrides(body, map[string]any{key: json.RawMessage(value)})
		if !isObject {
			require.Error(t, err, "only a JSON object is overridden")
			return
		}
		require.NoError(t, err)
		require.True(t, json.Valid(out), "%q", out)
		before := decodeNumbers(t, body).(map[string]any)
		before[key] = decodeNumbers(t, value)
		require.Equal(t, before, decodeNumbers(t, out))
	})
}

// FuzzSplit: the scanner that splits validated JSON agrees with encoding/json. An object put
// back together from its members, or an array from its elements, decodes to the same value.
func FuzzSplit(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			return
		}
		want := decodeNumbers(t, body)
		var rebuilt []byte
		switch kindOf(body) {
		case kindObject:
			rebuilt = append(rebuilt, '{')
			for i, m := range members(body) {
				if i > 0 {
					rebuilt = append(rebuilt, ',')
				}
				k, err := json.Marshal(string(m.key))
				require.NoError(t, err)
				rebuilt = append(append(append(rebuilt, k...), ':'), m.val...)
			}
			rebuilt = append(rebuilt, '}')
		case kindArray:
			rebuilt = append(rebuilt, '[')
			for i, e := range elements(body) {
				if i > 0 {
					rebuilt = append(rebuilt, ',')
				}
				rebuilt = append(rebuilt, e...)
			}
			rebuilt = append(rebuilt, ']')
		case kindString:
			var s string
			require.NoError(t, json.Unmarshal(body, &s))
			require.Equal(t, s, string(unquote(bytes.TrimSpace(body))))
			return
		default:
			return
		}
		require.Equal(t, want, decodeNumbers(t, rebuilt))
	})
}

// FuzzChatOverrides: overriding a parsed request gives exactly what parsing the overridden body
// gives, the same request or the same refusal, and leaves the original as it was.
func FuzzChatOverrides(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte, key string, value []byte) {
		if !json.Valid(value) || !utf8.ValidString(key) {
			return
		}
		req, err := ParseChat(body)
		if err != nil {
			return
		}
		before := *req
		overrides := map[string]any{key: json.RawMessage(value)}
		got, err := req.WithOverrides(overrides)
		over, werr := WithOverrides(body, overrides)
		require.NoError(t, werr)
		again, perr := ParseChat(over)
		if perr != nil {
			var want, de *domain.Error
			require.ErrorAs(t, perr, &want)
			require.ErrorAs(t, err, &de, "refused as parsing refuses: %v", perr)
			require.Equal(t, "override_params."+want.Param, de.Param)
			require.Contains(t, de.Message, want.Message)
		} else {
			require.NoError(t, err)
			require.Equal(t, again, got)
		}
		require.Equal(t, before, *req, "the original is unchanged")
	})
}
