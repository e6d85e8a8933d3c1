package openai

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/domain"
)

func TestWithOverrides(t *testing.T) {
	cases := []struct {
		name      string
		body      string
		overrides map[string]any
		want      string
	}{
		{
			"replaces a value, every other byte kept",
			"{\"model\" : \"gpt-4o\",\n  \"x_vendor\": {\"b\" : [1, 2.50, \"<&>\"]}, \"messages\":[]}",
			map[string]any{"model": "gpt-4o-mini"},
			"{\"model\" : \"gpt-4o-mini\",\n  \"x_vendor\": {\"b\" : [1, 2.50, \"<&>\"]}, \"messages\":[]}",
		},
		{
			"appends missing keys after the last member, sorted",
			"{\"a\":1\n}",
			map[string]any{"z": 1, "m": "<x>"},
			"{\"a\":1,\"m\":\"<x>\",\"z\":1\n}",
		},
		{
			"empty object",
			`{}`,
			map[string]any{"temperature": 0.5},
			`{"temperature":0.5}`,
		},
		{
			"empty object with spaces",
			`{ }`,
			map[string]any{"a": true},
			`{"a":true }`,
		},
		{
			"a repeated key is overridden at every occurrence",
			`{"n":1,"x":0,"n":2}`,
			map[string]any{"n": 3},
			`{"n":3,"x":0,"n":3}`,
		},
		{
			"keys are compared decoded",
			`{"mod\u0065l":"a"}`,
			map[string]any{"model": "b"},
			`{"mod\u0065l":"b"}`,
		},
		{
			"an object replaces, it does not merge",
			`{"response_format":{"type":"json_schema","json_schema":{}},"model":"m"}`,
			map[string]any{"response_format": map[string]any{"type": "text"}},
			`{"response_format":{"type":"text"},"model":"m"}`,
		},
		{
			"a raw JSON value",
			`{"model":"m"}`,
			map[string]any{"stop": json.RawMessage(`[ "a" ]`)},
			`{"model":"m","stop":["a"]}`,
		},
		{
			"null",
			`{"user":"u"}`,
			map[string]any{"user": nil},
			`{"user":null}`,
		},
		{
			"replaced and appended together",
			`{"model":"a","messages":[{"role":"user","content":"hi"}]}`,
			map[string]any{"model": "b", "max_tokens": 10},
			`{"model":"b","messages":[{"role":"user","content":"hi"}],"max_tokens":10}`,
		},
		{
			"nothing to override",
			` {"a" : 1} `,
			nil,
			` {"a" : 1} `,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := WithOverrides([]byte(tc.body), tc.overrides)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

func TestWithOverridesRefuses(t *testing.T) {
	cases := []struct {
		name      string
		body      string
		overrides map[string]any
		param     string
	}{
		{"an array", `[1]`, map[string]any{"a": 1}, ""},
		{"invalid JSON", `{"a":`, map[string]any{"a": 1}, ""},
		{"trailing data", `{"a":1}{}`, map[string]any{"a": 1}, ""},
		{"trailing garbage", `{"a":1} x`, map[string]any{"a": 1}, ""},
		{"empty", ``, map[string]any{"a": 1}, ""},
		{"a value JSON cannot hold", `{}`, map[string]any{"temperature": math.Inf(1)}, "override_params.temperature"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := WithOverrides([]byte(tc.body), tc.overrides)
			var de *domain.Error
			require.ErrorAs(t, err, &de)
			assert.Equal(t, domain.CodeInvalid, de.Code)
			assert.Equal(t, tc.param, de.Param)
		})
	}
}

// TestWithOverridesThenParse: an overridden body is still a request the parser reads, with the
// overridden values.
func TestWithOverridesThenParse(t *testing.T) {
	body, err := WithOverrides([]byte(chat(`"n":2`)), map[string]any{"model": "claude-sonnet", "n": 4, "stream": true})
	require.NoError(t, err)
	req, err := ParseChat(body)
	require.NoError(t, err)
	assert.Equal(t, "claude-sonnet", req.Model)
	assert.Equal(t, 4, req.N)
	assert.True(t, req.Stream)

	body, err = WithOverrides([]byte(chat("")), map[string]any{"temperature": 5})
	require.NoError(t, err)
	_, err = ParseChat(body)
	requireInvalid(t, err, "temperature", "between 0 and 2")
}
