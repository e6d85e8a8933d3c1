package openai

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// roundTrip replays body as a stream and accumulates the stream again.
func roundTrip(t *testing.T, body string, includeUsage bool) (chunks [][]byte, again []byte) {
	t.Helper()
	chunks, err := ReplayStream([]byte(body), includeUsage)
	require.NoError(t, err)
	acc := &StreamAccumulator{}
	for _, c := range chunks {
		requireValidJSON(t, c)
		require.NoError(t, acc.Add(c), "%s", c)
	}
	again, err = acc.Body()
	require.NoError(t, err)
	return chunks, again
}

var longText = strings.Repeat("The quick brown fox jumps over the lazy dog; ", 30) + "ünïcødé ✓ 😀 end."

func TestReplayStreamRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		body string
	}{
		{"content", `{"id":"chatcmpl-1","object":"chat.completion","created":1754400000,"model":"gpt-4o-mini","choices":[` +
			`{"index":0,"message":{"role":"assistant","content":"Hello there.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12},"service_tier":"default","system_fingerprint":"fp_1"}`},
		{"long content", `{"id":"chatcmpl-2","object":"chat.completion","created":1,"model":"m","choices":[` +
			`{"index":0,"message":{"role":"assistant","content":` + quote(longText) + `},"logprobs":null,"finish_reason":"length"}]}`},
		{"empty content", `{"id":"chatcmpl-3","object":"chat.completion","created":1,"model":"m","choices":[` +
			`{"index":0,"message":{"role":"assistant","content":""},"logprobs":null,"finish_reason":"length"}]}`},
		{"tool calls", `{"id":"chatcmpl-4","object":"chat.completion","created":1,"model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":null,` +
			`"tool_calls":[{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}},` +
			`{"id":"call_b","type":"function","function":{"name":"search","arguments":` + quote(`{"q":"`+longText+`"}`) + `}},` +
			`{"id":"call_c","type":"function","function":{"name":"now","arguments":""}}]},"logprobs":null,"finish_reason":"tool_calls"}],` +
			`"usage":{"prompt_tokens":90,"completion_tokens":30,"total_tokens":120}}`},
		{"text and a tool call", `{"id":"chatcmpl-5","object":"chat.completion","created":1,"model":"claude","choices":[{"index":0,"message":{"role":"assistant",` +
			`"content":"Let me call a tool.","tool_calls":[{"id":"toolu_1","type":"function","function":{"name":"f","arguments":"{}"}}]},"logprobs":null,"finish_reason":"tool_calls"}]}`},
		{"legacy function_call", `{"id":"chatcmpl-6","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,` +
			`"function_call":{"name":"f","arguments":"{\"a\":1}"}},"logprobs":null,"finish_reason":"function_call"}]}`},
		{"n=2", `{"id":"chatcmpl-7","object":"chat.completion","created":1,"model":"m","choices":[` +
			`{"index":0,"message":{"role":"assistant","content":"Yes.","refusal":null},"logprobs":{"content":[{"token":"Yes","logprob":-0.1,"bytes":[89,101,115],"top_logprobs":[]},{"token":".","logprob":-0.2,"bytes":[46],"top_logprobs":[]}],"refusal":null},"finish_reason":"stop"},` +
			`{"index":1,"message":{"role":"assistant","content":"No.","refusal":null},"logprobs":{"content":[{"token":"No.","logprob":-0.7,"bytes":[78,111,46],"top_logprobs":[]}],"refusal":null},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":9,"completion_tokens":5,"total_tokens":14}}`},
		{"refusal", `{"id":"chatcmpl-8","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,` +
			`"refusal":"I'm sorry, I can't help with that."},"logprobs":null,"finish_reason":"stop"}]}`},
		{"reasoning_content", `{"id":"x","object":"chat.completion","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"message":{"role":"assistant",` +
			`"content":"9.8","reasoning_content":"Compare the decimals."},"logprobs":null,"finish_reason":"stop"}]}`},
		{"thinking", `{"id":"chatcmpl-9","object":"chat.completion","created":1,"model":"claude","choices":[{"index":0,"message":{"role":"assistant","content":"one two",` +
			`"content_blocks":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"text","text":"one "},{"type":"redacted_thinking","data":"EmwK"},` +
			`{"type":"thinking","signature":"s2"},{"type":"text","text":"two"}]},"logprobs":null,"finish_reason":"stop"}]}`},
		{"thinking and tool calls, no text", `{"id":"chatcmpl-10","object":"chat.completion","created":1,"model":"claude","choices":[{"index":0,"message":{"role":"assistant",` +
			`"content":null,"tool_calls":[{"id":"t","type":"function","function":{"name":"f","arguments":"{}"}}],` +
			`"content_blocks":[{"type":"thinking","thinking":"call f","signature":"sig"}]},"logprobs":null,"finish_reason":"tool_calls"}]}`},
		{"text completion", `{"id":"cmpl-1","object":"text_completion","created":1,"model":"gpt-3.5-turbo-instruct","choices":[` +
			`{"text":` + quote("\n\n"+longText) + `,"index":0,"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`},
		{"text completion n=2 with logprobs", `{"id":"cmpl-2","object":"text_completion","created":1,"model":"m","system_fingerprint":"fp","choices":[` +
			`{"text":"a b","index":0,"logprobs":{"tokens":["a"," b"],"token_logprobs":[-1,-2],"top_logprobs":[{"a":-1},{" b":-2}],"text_offset":[3,4]},"finish_reason":"stop"},` +
			`{"text":"","index":1,"logprobs":{"tokens":[],"token_logprobs":[],"top_logprobs":[],"text_offset":[]},"finish_reason":"length"}]}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, again := roundTrip(t, tc.body, true)
			assert.JSONEq(t, tc.body, string(again))
			if strings.Contains(tc.body, `"usage"`) {
				_, again := roundTrip(t, tc.body, false)
				assert.JSONEq(t, string(withoutMember(t, []byte(tc.body), "usage")), string(again))
			}
		})
	}
}

// TestReplayStreamTestdata replays each whole answer of testdata/streams and accumulates it
// again.
func TestReplayStreamTestdata(t *testing.T) {
	for _, file := range streamFiles(t, "") {
		name := strings.TrimSuffix(file, ".sse")
		if strings.Contains(name, "incomplete_") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(name + ".json")
			require.NoError(t, err)
			chunks, again := roundTrip(t, string(body), true)
			assert.JSONEq(t, string(body), string(again))
			for _, c := range chunks {
				assert.NotContains(t, string(c), "\n", "a pretty-printed answer replays as one line a chunk")
			}
		})
	}
}

func TestReplayStreamChunks(t *testing.T) {
	body := `{"id":"chatcmpl-1","object":"chat.completion","created":1754400000,"model":"gpt-4o-mini","system_fingerprint":"fp_1","choices":[` +
		`{"index":0,"message":{"role":"assistant","content":` + quote(longText) + `},"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`

	t.Run("as OpenAI streams with include_usage", func(t *testing.T) {
		chunks, err := ReplayStream([]byte(body), true)
		require.NoError(t, err)
		require.Greater(t, len(chunks), 5, "a long answer comes in a few chunks")
		var decoded []map[string]any
		for _, c := range chunks {
			var m map[string]any
			require.NoError(t, json.Unmarshal(c, &m), "%s", c)
			assert.Equal(t, "chatcmpl-1", m["id"])
			assert.Equal(t, "chat.completion.chunk", m["object"])
			assert.Equal(t, float64(1754400000), m["created"])
			assert.Equal(t, "gpt-4o-mini", m["model"])
			assert.Equal(t, "fp_1", m["system_fingerprint"])
			decoded = append(decoded, m)
		}
		first := decoded[0]["choices"].([]any)[0].(map[string]any)
		assert.Equal(t, map[string]any{"role": "assistant", "content": ""}, first["delta"])
		assert.Nil(t, first["finish_reason"])
		assert.Contains(t, first, "logprobs")
		for _, m := range decoded[:len(decoded)-1] {
			assert.Contains(t, m, "usage")
			assert.Nil(t, m["usage"], "every chunk but the last has usage null, as OpenAI's do")
		}
		for _, m := range decoded[1 : len(decoded)-2] {
			c := m["choices"].([]any)[0].(map[string]any)
			content := c["delta"].(map[string]any)["content"].(string)
			assert.LessOrEqual(t, len(content), replayPiece)
			assert.NotEmpty(t, content)
		}
		end := decoded[len(decoded)-2]["choices"].([]any)[0].(map[string]any)
		assert.Equal(t, map[string]any{}, end["delta"])
		assert.Equal(t, "stop", end["finish_reason"])
		usage := decoded[len(decoded)-1]
		assert.Equal(t, []any{}, usage["choices"])
		assert.Equal(t, map[string]any{"prompt_tokens": float64(9), "completion_tokens": float64(3), "total_tokens": float64(12)}, usage["usage"])
	})

	t.Run("without include_usage", func(t *testing.T) {
		chunks, err := ReplayStream([]byte(body), false)
		require.NoError(t, err)
		for _, c := range chunks {
			assert.NotContains(t, string(c), `"usage"`)
		}
		assert.Contains(t, string(chunks[len(chunks)-1]), `"finish_reason":"stop"`)
	})

	t.Run("a tool call: id, type and name first, then the arguments", func(t *testing.T) {
		chunks, err := ReplayStream([]byte(`{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant",`+
			`"content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}`), false)
		require.NoError(t, err)
		require.Len(t, chunks, 4)
		assert.Contains(t, string(chunks[0]), `"delta":{"role":"assistant","content":null}`)
		assert.Contains(t, string(chunks[1]), `"delta":{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"f","arguments":""}}]}`)
		assert.Contains(t, string(chunks[2]), `"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}`)
		assert.Contains(t, string(chunks[3]), `"delta":{},"logprobs":null,"finish_reason":"tool_calls"`)
	})

	t.Run("a text completion", func(t *testing.T) {
		chunks, err := ReplayStream([]byte(`{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"text":"Hi","index":0,"logprobs":null,"finish_reason":"stop"}]}`), false)
		require.NoError(t, err)
		require.Len(t, chunks, 2)
		assert.JSONEq(t, `{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"text":"Hi","index":0,"logprobs":null,"finish_reason":null}]}`, string(chunks[0]))
		assert.JSONEq(t, `{"id":"cmpl-1","object":"text_completion","created":1,"model":"m","choices":[{"text":"","index":0,"logprobs":null,"finish_reason":"stop"}]}`, string(chunks[1]))
	})
}

func TestReplayStreamRefuses(t *testing.T) {
	cases := map[string]string{
		"embeddings":         `{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1]}],"model":"text-embedding-3-small"}`,
		"not JSON":           `{"object":"chat.completion",`,
		"an array":           `[]`,
		"no choices":         `{"object":"chat.completion","choices":[]}`,
		"choices null":       `{"object":"chat.completion","choices":null}`,
		"no message":         `{"object":"chat.completion","choices":[{"index":0,"finish_reason":"stop"}]}`,
		"content a number":   `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":1},"finish_reason":"stop"}]}`,
		"tool_calls a map":   `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","tool_calls":{}},"finish_reason":"stop"}]}`,
		"a tool call no fn":  `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","tool_calls":[{"id":"a"}]},"finish_reason":"stop"}]}`,
		"index out of range": `{"object":"chat.completion","choices":[{"index":500,"message":{"role":"assistant","content":"a"},"finish_reason":"stop"}]}`,
		"text a number":      `{"object":"text_completion","choices":[{"index":0,"text":5,"finish_reason":"stop"}]}`,
		"logprobs a string":  `{"object":"text_completion","choices":[{"index":0,"text":"a","logprobs":"x","finish_reason":"stop"}]}`,
		"blocks a string":    `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"a","content_blocks":"x"},"finish_reason":"stop"}]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			chunks, err := ReplayStream([]byte(body), true)
			assert.Error(t, err)
			assert.Nil(t, chunks)
		})
	}
}

func TestReplayStreamInfersTheAnswerWithoutObject(t *testing.T) {
	_, again := roundTrip(t, `{"id":"a","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"logprobs":null,"finish_reason":"stop"}]}`, false)
	assert.JSONEq(t, `{"id":"a","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"logprobs":null,"finish_reason":"stop"}]}`, string(again))
	_, again = roundTrip(t, `{"id":"b","choices":[{"index":0,"text":"hi","logprobs":null,"finish_reason":"stop"}]}`, false)
	assert.JSONEq(t, `{"id":"b","object":"text_completion","choices":[{"index":0,"text":"hi","logprobs":null,"finish_reason":"stop"}]}`, string(again))
}

func TestPieces(t *testing.T) {
	for _, s := range []string{"", "short", longText, strings.Repeat("é", 400), strings.Repeat("x", 1000), strings.Repeat("😀 ", 200)} {
		ps := pieces([]byte(s), replayPiece)
		var joined strings.Builder
		for _, p := range ps {
			assert.LessOrEqual(t, len(p), replayPiece)
			assert.NotEmpty(t, p)
			assert.True(t, json.Valid([]byte(quote(string(p)))))
			assert.Equal(t, quote(string(p)), string(appendString(nil, p)), "cut on a character boundary")
			joined.Write(p)
		}
		assert.Equal(t, s, joined.String())
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestAppendCompact(t *testing.T) {
	in := "{ \"a\" : \"x \\\" y\\\\\" ,\n\t\"b\" : [ 1 , 2.50 ] ,\r\n \"c\":{ } }"
	assert.Equal(t, `{"a":"x \" y\\","b":[1,2.50],"c":{}}`, string(appendCompact(nil, []byte(in))))
}
