package openai

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func keyOf(t *testing.T, endpoint, body string) string {
	t.Helper()
	k, err := CacheKeyMaterial(endpoint, []byte(body))
	require.NoError(t, err, body)
	require.True(t, json.Valid(k), "%s", k)
	return string(k)
}

const keyBase = `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]}`

// chatWith is keyBase with members added.
func chatWith(members string) string {
	return strings.TrimSuffix(keyBase, "}") + "," + members + "}"
}

func TestCacheKeyMaterialIsCanonical(t *testing.T) {
	t.Run("the canonical form", func(t *testing.T) {
		got := keyOf(t, endpointChat, ` {
			"temperature": 0.70, "model": "gpt-4o",
			"messages": [ {"content": "caf\u00e9 \"x\"\n<b>", "role": "user"} ],
			"stream": true, "seed": 12345678901234567890, "top_p": 1E0, "n": 1.0,
			"logit_bias": {"50256": -100, "1": 2.50}
		} `)
		assert.Equal(t, `{"logit_bias":{"1":2.5,"50256":-100},"messages":[{"content":"café \"x\"\n<b>","role":"user"}],`+
			`"model":"gpt-4o","n":1,"seed":12345678901234567890,"temperature":0.7,"top_p":1}`, got)
	})

	same := []struct {
		name string
		a, b string
	}{
		{"key order", `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"temperature":0}`,
			`{"temperature":0,"messages":[{"content":"hi","role":"user"}],"model":"gpt-4o"}`},
		{"nested key order", chatWith(`"response_format":{"type":"json_schema","json_schema":{"name":"x","schema":{"type":"object","properties":{"a":{"type":"string"}}}}}`),
			chatWith(`"response_format":{"json_schema":{"schema":{"properties":{"a":{"type":"string"}},"type":"object"},"name":"x"},"type":"json_schema"}`)},
		{"whitespace", keyBase, "{\n  \"model\" : \"gpt-4o\",\r\n\t\"messages\" : [ { \"role\" : \"user\" , \"content\" : \"hi\" } ]\n}\n"},
		{"string escapes", keyBase, `{"model":"gpt-4o","messages":[{"role":"\u0075ser","content":"h\u0069"}]}`},
		{"1, 1.0, 1e0, 10e-1, 0.1E1", chatWith(`"temperature":1`), chatWith(`"temperature":1.0`)},
		{"1e0", chatWith(`"temperature":1`), chatWith(`"temperature":1e0`)},
		{"10e-1", chatWith(`"temperature":1`), chatWith(`"temperature":10e-1`)},
		{"0.1E+1", chatWith(`"temperature":1`), chatWith(`"temperature":0.1E+1`)},
		{"0.7 and 7e-1", chatWith(`"temperature":0.7`), chatWith(`"temperature":7e-1`)},
		{"zero and minus zero", chatWith(`"temperature":0`), chatWith(`"temperature":-0.0e5`)},
		{"max_tokens 100 and 1e2", chatWith(`"max_tokens":100`), chatWith(`"max_tokens":1e2`)},
		{"a big seed spelled two ways", chatWith(`"seed":12345678901234567890`), chatWith(`"seed":1.2345678901234567890e19`)},
		{"numbers deep in a schema", chatWith(`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"n":{"type":"integer","minimum":1.50}}}}}]`),
			chatWith(`"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"n":{"minimum":15e-1,"type":"integer"}}}}}]`)},
		{"a repeated key: the last one counts", chatWith(`"temperature":0.2`), chatWith(`"temperature":0.9,"temperature":0.2`)},
		{"stream", keyBase, chatWith(`"stream":true`)},
		{"stream_options", chatWith(`"stream":false`), chatWith(`"stream":true,"stream_options":{"include_usage":true}`)},
		{"user", keyBase, chatWith(`"user":"user-1234"`)},
		{"safety_identifier", keyBase, chatWith(`"safety_identifier":"hash-of-user"`)},
		{"metadata", keyBase, chatWith(`"metadata":{"session":"abc"}`)},
		{"store", keyBase, chatWith(`"store":true`)},
		{"service_tier", keyBase, chatWith(`"service_tier":"flex"`)},
		{"prompt_cache_key", keyBase, chatWith(`"prompt_cache_key":"tenant-7"`)},
		{"prompt_cache_retention", keyBase, chatWith(`"prompt_cache_retention":"24h"`)},
		{"a top-level null is not sent", keyBase, chatWith(`"temperature":null,"tools":null,"seed":null`)},
	}
	for _, tc := range same {
		t.Run("same: "+tc.name, func(t *testing.T) {
			assert.Equal(t, keyOf(t, endpointChat, tc.a), keyOf(t, endpointChat, tc.b))
		})
	}

	differ := []struct {
		name string
		a, b string
	}{
		{"model", keyBase, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`},
		{"messages", keyBase, `{"model":"gpt-4o","messages":[{"role":"user","content":"hi!"}]}`},
		{"message order", `{"model":"m","messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`,
			`{"model":"m","messages":[{"role":"user","content":"b"},{"role":"user","content":"a"}]}`},
		{"role", keyBase, `{"model":"gpt-4o","messages":[{"role":"developer","content":"hi"}]}`},
		{"a content string and a text part", keyBase, `{"model":"gpt-4o","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`},
		{"tools", keyBase, chatWith(`"tools":[{"type":"function","function":{"name":"f"}}]`)},
		{"tool_choice", chatWith(`"tools":[{"type":"function","function":{"name":"f"}}]`), chatWith(`"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"required"`)},
		{"parallel_tool_calls", keyBase, chatWith(`"parallel_tool_calls":false`)},
		{"functions", keyBase, chatWith(`"functions":[{"name":"f"}]`)},
		{"temperature", chatWith(`"temperature":0.7`), chatWith(`"temperature":0.70000001`)},
		{"temperature sent or not", keyBase, chatWith(`"temperature":1`)},
		{"top_p", keyBase, chatWith(`"top_p":0.5`)},
		{"n", keyBase, chatWith(`"n":2`)},
		{"seed", chatWith(`"seed":1`), chatWith(`"seed":2`)},
		{"seeds a float64 cannot tell apart", chatWith(`"seed":9007199254740993`), chatWith(`"seed":9007199254740992`)},
		{"big seeds", chatWith(`"seed":12345678901234567890`), chatWith(`"seed":12345678901234567891`)},
		{"max_tokens", keyBase, chatWith(`"max_tokens":100`)},
		{"max_completion_tokens", chatWith(`"max_tokens":100`), chatWith(`"max_completion_tokens":100`)},
		{"stop", keyBase, chatWith(`"stop":["\n"]`)},
		{"response_format", keyBase, chatWith(`"response_format":{"type":"json_object"}`)},
		{"logprobs", keyBase, chatWith(`"logprobs":true`)},
		{"top_logprobs", chatWith(`"logprobs":true`), chatWith(`"logprobs":true,"top_logprobs":2`)},
		{"logit_bias", keyBase, chatWith(`"logit_bias":{"50256":-100}`)},
		{"presence_penalty", keyBase, chatWith(`"presence_penalty":0.5`)},
		{"frequency_penalty", keyBase, chatWith(`"frequency_penalty":0.5`)},
		{"reasoning_effort", keyBase, chatWith(`"reasoning_effort":"high"`)},
		{"thinking", keyBase, chatWith(`"thinking":{"type":"enabled","budget_tokens":2048}`)},
		{"modalities", keyBase, chatWith(`"modalities":["text","audio"]`)},
		{"a provider's own member", keyBase, chatWith(`"top_k":40`)},
		{"a nested null is kept", `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[]}]}`,
			`{"model":"m","messages":[{"role":"assistant","tool_calls":[]}]}`},
		{"a string is not a number", chatWith(`"x":"1"`), chatWith(`"x":1`)},
		{"true is not 1", chatWith(`"x":true`), chatWith(`"x":1`)},
		{"small numbers", chatWith(`"x":1e-7`), chatWith(`"x":1e-8`)},
		{"a sign", chatWith(`"x":1`), chatWith(`"x":-1`)},
	}
	for _, tc := range differ {
		t.Run("differ: "+tc.name, func(t *testing.T) {
			assert.NotEqual(t, keyOf(t, endpointChat, tc.a), keyOf(t, endpointChat, tc.b))
		})
	}
}

func TestCacheKeyMaterialEndpoints(t *testing.T) {
	completion := `{"model":"gpt-3.5-turbo-instruct","prompt":"Say this","max_tokens":7,"temperature":0}`
	assert.Equal(t, keyOf(t, endpointCompletion, completion),
		keyOf(t, endpointCompletion, `{"temperature":0.0,"prompt":"Say this","stream":true,"user":"u","model":"gpt-3.5-turbo-instruct","max_tokens":7}`))
	for _, member := range []string{`"echo":true`, `"best_of":3`, `"suffix":"!"`, `"logprobs":2`, `"n":2`, `"stop":"."`} {
		assert.NotEqual(t, keyOf(t, endpointCompletion, completion),
			keyOf(t, endpointCompletion, strings.TrimSuffix(completion, "}")+","+member+"}"), member)
	}

	embed := `{"model":"text-embedding-3-small","input":["a","b"]}`
	assert.Equal(t, keyOf(t, endpointEmbed, embed), keyOf(t, endpointEmbed, `{"input":["a","b"],"user":"u","model":"text-embedding-3-small"}`))
	for _, member := range []string{`"dimensions":256`, `"encoding_format":"base64"`, `"input_type":"query"`} {
		assert.NotEqual(t, keyOf(t, endpointEmbed, embed), keyOf(t, endpointEmbed, strings.TrimSuffix(embed, "}")+","+member+"}"), member)
	}
	assert.NotEqual(t, keyOf(t, endpointEmbed, embed), keyOf(t, endpointEmbed, `{"model":"text-embedding-3-small","input":["b","a"]}`))
}

func TestCacheKeyMaterialRefuses(t *testing.T) {
	cases := []struct {
		name, endpoint, body string
	}{
		{"rerank", "rerank", `{"model":"m","query":"q","documents":["a"]}`},
		{"pass-through", "proxy", keyBase},
		{"no endpoint", "", keyBase},
		{"not JSON", endpointChat, `{"model":`},
		{"an array", endpointChat, `[1]`},
		{"empty", endpointChat, ``},
		{"an exponent past any float", endpointChat, chatWith(`"x":1e9999999999`)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			k, err := CacheKeyMaterial(tc.endpoint, []byte(tc.body))
			assert.Error(t, err)
			assert.Nil(t, k)
		})
	}
}

func TestCanonicalNumber(t *testing.T) {
	cases := map[string]string{
		"0": "0", "-0": "0", "0.000": "0", "0e10": "0", "1": "1", "-1": "-1", "1.0": "1", "1e0": "1", "1E+0": "1",
		"10": "10", "1e1": "10", "100e-2": "1", "0.5": "0.5", "5e-1": "0.5", "-0.25": "-0.25", "123.4500": "123.45",
		"0.000001": "0.000001", "1e-7": "1e-7", "12e-8": "1.2e-7", "1e20": "100000000000000000000", "1e21": "1e+21",
		"123456789012345678901234": "1.23456789012345678901234e+23", "12345678901234567890": "12345678901234567890",
		"1e400": "1e+400", "-2.5e-400": "-2.5e-400", "007": "7", "0.10": "0.1",
	}
	for in, want := range cases {
		got, err := appendCanonicalNumber(nil, []byte(in))
		require.NoError(t, err, in)
		assert.Equal(t, want, string(got), in)
		assert.True(t, json.Valid(got), in)
	}
}

func FuzzCacheKeyMaterial(f *testing.F) {
	for _, s := range []string{keyBase, chatWith(`"temperature":0.70,"seed":1e3,"stop":["\n"]`), `{"a":[1,2,{"b":null,"a":-0.0}],"c":"\u00e9"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		k, err := CacheKeyMaterial(endpointChat, body)
		if err != nil {
			return
		}
		require.True(t, json.Valid(k), "%s", k)
		// The canonical form is its own canonical form, and means what the body means.
		again, err := CacheKeyMaterial(endpointChat, k)
		require.NoError(t, err)
		require.Equal(t, string(k), string(again))
		var want, got any
		if json.Unmarshal(body, &want) != nil {
			return // a number no float64 holds
		}
		require.NoError(t, json.Unmarshal(k, &got))
		for name := range keyIgnored {
			delete(want.(map[string]any), name)
		}
		for name, v := range want.(map[string]any) {
			if v == nil {
				delete(want.(map[string]any), name)
			}
		}
		require.Equal(t, want, got)
	})
}
