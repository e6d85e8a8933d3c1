package providers_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers"
)

// A provider's error keeps its own error object when it sends one in OpenAI's shape, and is
// wrapped, its text prefixed with the provider's name and status, when it sends anything else.
func TestProviderErrorBody(t *testing.T) {
	long := strings.Repeat("x", 5000)
	cases := []struct {
		name   string
		status int
		body   string
		want   map[string]any
	}{
		{"OpenAI's own error, every field kept", 400,
			`{"error":{"message":"Invalid 'messages'","type":"invalid_request_error","param":"messages","code":"invalid_value","extra":{"hint":1}}}`,
			map[string]any{"message": "Invalid 'messages'", "type": "invalid_request_error", "param": "messages", "code": "invalid_value", "extra": map[string]any{"hint": 1.0}}},
		{"an error object without a type", 429, `{"error":{"message":"wait"}}`,
			map[string]any{"message": "wait", "type": providers.ProviderErrorType, "param": nil, "code": nil}},
		{"Anthropic's error, its type kept", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			map[string]any{"message": "Overloaded", "type": "overloaded_error", "param": nil, "code": nil}},
		{"plain text", 404, "404 page not found\n",
			map[string]any{"message": "openai answered 404: 404 page not found", "type": providers.ProviderErrorType, "param": nil, "code": nil}},
		{"an empty body", 503, "",
			map[string]any{"message": "openai answered 503: Service Unavailable", "type": providers.ProviderErrorType, "param": nil, "code": nil}},
		{"JSON of another shape", 500, `{"ok":false}`,
			map[string]any{"message": `openai answered 500: {"ok":false}`, "type": providers.ProviderErrorType, "param": nil, "code": nil}},
		{"a long page, cut", 502, long,
			map[string]any{"message": "openai answered 502: " + long[:4096] + "...", "type": providers.ProviderErrorType, "param": nil, "code": nil}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got struct {
				Error map[string]any `json:"error"`
			}
			require.NoError(t, json.Unmarshal(providers.ProviderErrorBody("openai", tc.status, []byte(tc.body)), &got))
			assert.Equal(t, tc.want, got.Error)
		})
	}
}

// The answered body marks the error as the provider's: its name and status.
func TestUpstreamErrorAnswerBody(t *testing.T) {
	up := &providers.UpstreamError{Status: 404, Provider: "openai", Body: providers.ProviderErrorBody("openai", 404, []byte("404 page not found"))}
	var got struct {
		Error map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(up.AnswerBody(), &got))
	assert.Equal(t, map[string]any{"message": "openai answered 404: 404 page not found", "type": providers.ProviderErrorType,
		"param": nil, "code": nil, "provider": "openai", "status": 404.0}, got.Error)

	broken := &providers.UpstreamError{Status: 502, Provider: "vllm", Body: []byte("not json")}
	require.NoError(t, json.Unmarshal(broken.AnswerBody(), &got))
	assert.Equal(t, "vllm answered 502: not json", got.Error["message"])
	assert.Equal(t, "vllm", got.Error["provider"])
}
