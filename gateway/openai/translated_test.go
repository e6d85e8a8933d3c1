package openai_test

// These tests hold the stream accumulator to the gateway's own translations: a streamed answer
// from the Anthropic and Gemini stand-ins, through the adapters, accumulates to the answer the
// same adapter gives the same request unstreamed, which is what a cached streamed miss is later
// served as. They are an external test package because the adapters import this one.

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/anthropic"
	"github.com/causeway/causeway/gateway/providers/gemini"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// The endpoint kinds CacheKeyMaterial takes are the providers' constants.
func TestCacheKeyMaterialTakesTheProvidersEndpoints(t *testing.T) {
	for endpoint, body := range map[string]string{
		providers.EndpointChat:       `{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
		providers.EndpointCompletion: `{"model":"m","prompt":"hi"}`,
		providers.EndpointEmbed:      `{"model":"m","input":"hi"}`,
	} {
		_, err := openai.CacheKeyMaterial(endpoint, []byte(body))
		assert.NoError(t, err, endpoint)
	}
	_, err := openai.CacheKeyMaterial(providers.EndpointRerank, []byte(`{"model":"m","query":"q","documents":["a"]}`))
	assert.Error(t, err)
}

type streamingAdapter interface {
	providers.Provider
	providers.ChatStreamer
}

func TestStreamAccumulatorMatchesTranslatedAnswers(t *testing.T) {
	weather := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`
	anthropicTarget := func(t *testing.T) providers.Target {
		return providers.Target{Provider: "anthropic", BaseURL: providertest.NewAnthropic(t).BaseURL(), APIKey: "sk-ant-standin"}
	}
	geminiTarget := func(t *testing.T) providers.Target {
		return providers.Target{Provider: "google", BaseURL: providertest.NewGemini(t).BaseURL(), APIKey: "standin-key"}
	}
	cases := []struct {
		name    string
		adapter streamingAdapter
		target  func(*testing.T) providers.Target
		model   string
		body    string
		choices int
	}{
		{"anthropic text", anthropic.New(nil), anthropicTarget, "claude-sonnet-4-5",
			`{"messages":[{"role":"user","content":"Hi"}]}`, 1},
		{"anthropic thinking", anthropic.New(nil), anthropicTarget, "claude-sonnet-4-5",
			`{"messages":[{"role":"user","content":"Hi"}],"max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":1024}}`, 1},
		{"anthropic tool call", anthropic.New(nil), anthropicTarget, "claude-sonnet-4-5",
			`{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `]}`, 1},
		{"anthropic thinking and a tool call", anthropic.New(nil), anthropicTarget, "claude-sonnet-4-5",
			`{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `],"max_tokens":4096,"thinking":{"type":"enabled","budget_tokens":1024}}`, 1},
		{"anthropic legacy function_call", anthropic.New(nil), anthropicTarget, "claude-sonnet-4-5",
			`{"messages":[{"role":"user","content":"Weather?"}],"functions":[{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}]}`, 1},
		{"gemini text", gemini.New(nil), geminiTarget, "gemini-2.5-flash",
			`{"messages":[{"role":"user","content":"Hi"}]}`, 1},
		{"gemini n=2", gemini.New(nil), geminiTarget, "gemini-2.5-flash",
			`{"messages":[{"role":"user","content":"Hi"}],"n":2}`, 2},
		{"gemini thinking", gemini.New(nil), geminiTarget, "gemini-2.5-flash",
			`{"messages":[{"role":"user","content":"Hi"}],"thinking":{"type":"enabled","budget_tokens":1024}}`, 1},
		{"gemini tool call", gemini.New(nil), geminiTarget, "gemini-2.5-flash",
			`{"messages":[{"role":"user","content":"Weather?"}],"tools":[` + weather + `]}`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			call := providers.Call{Endpoint: providers.EndpointChat, Model: tc.model, Body: json.RawMessage(tc.body)}
			whole, err := tc.adapter.Chat(context.Background(), tc.target(t), call)
			require.NoError(t, err)

			call.Stream = true
			call.Body = json.RawMessage(strings.Replace(tc.body, "{", `{"stream":true,"stream_options":{"include_usage":true},`, 1))
			st, err := tc.adapter.ChatStream(context.Background(), tc.target(t), call)
			require.NoError(t, err)
			defer st.Close()
			acc := &openai.StreamAccumulator{Choices: tc.choices}
			for {
				chunk, err := st.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				require.NoError(t, acc.Add(chunk), "%s", chunk)
			}
			require.True(t, acc.Complete())
			streamed, err := acc.Body()
			require.NoError(t, err)

			// The stand-ins stream other words than they answer whole.
			want := strings.ReplaceAll(string(whole.Body), providertest.Reply, providertest.StreamText(5))
			assert.Equal(t, comparable(t, []byte(want)), comparable(t, streamed))

			// And the accumulated answer replays as a stream that accumulates to itself.
			chunks, err := openai.ReplayStream(streamed, true)
			require.NoError(t, err)
			again := &openai.StreamAccumulator{}
			for _, c := range chunks {
				require.NoError(t, again.Add(c))
			}
			replayed, err := again.Body()
			require.NoError(t, err)
			assert.JSONEq(t, string(streamed), string(replayed))
		})
	}
}

// comparable is a chat.completion without what differs between two calls of one request: its
// created time, usage (whose output counts follow the words), and ids the adapters make up.
func comparable(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var c map[string]any
	require.NoError(t, json.Unmarshal(body, &c), "%s", body)
	delete(c, "created")
	delete(c, "usage")
	if id, _ := c["id"].(string); !strings.Contains(id, "standin") {
		c["id"] = "made up"
	}
	choices, _ := c["choices"].([]any)
	for _, choice := range choices {
		msg, _ := choice.(map[string]any)["message"].(map[string]any)
		calls, _ := msg["tool_calls"].([]any)
		for _, call := range calls {
			if m := call.(map[string]any); strings.HasPrefix(m["id"].(string), "call_") {
				m["id"] = "made up"
			}
		}
	}
	return c
}
