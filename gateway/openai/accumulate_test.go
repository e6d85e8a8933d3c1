package openai

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/sse"
)

// The streams in testdata/streams are written as providers send them (OpenAI, Azure, DeepSeek,
// and an Anthropic answer as the gateway translates it); NAME.json beside NAME.sse is the
// whole answer the stream amounts to, as the provider answers the same request unstreamed.

// readStream reads the data payloads of a server-sent event stream.
func readStream(t testing.TB, raw []byte) [][]byte {
	t.Helper()
	r := sse.NewReader(bytes.NewReader(raw))
	var out [][]byte
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, ev.Data)
	}
}

func accumulate(t testing.TB, chunks [][]byte, choices int) *StreamAccumulator {
	t.Helper()
	acc := &StreamAccumulator{Choices: choices}
	for i, c := range chunks {
		require.NoError(t, acc.Add(c), "chunk %d: %s", i, c)
	}
	return acc
}

func streamFiles(t *testing.T, prefix string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "streams", prefix+"*.sse"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

func TestStreamAccumulatorRebuildsTheWholeAnswer(t *testing.T) {
	for _, file := range streamFiles(t, "") {
		name := strings.TrimSuffix(filepath.Base(file), ".sse")
		if strings.HasPrefix(name, "incomplete_") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(file)
			require.NoError(t, err)
			want, err := os.ReadFile(strings.TrimSuffix(file, ".sse") + ".json")
			require.NoError(t, err)

			acc := accumulate(t, readStream(t, raw), 0)
			require.True(t, acc.Complete())
			got, err := acc.Body()
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
		})
	}
}

func TestStreamAccumulatorIncomplete(t *testing.T) {
	cases := []struct {
		file    string
		choices int
		why     string
	}{
		{"incomplete_error", 0, "carried an error"},
		{"incomplete_cut", 0, "choice 0 of the stream has no finish_reason"},
		{"incomplete_choice", 0, "choice 0 of the stream has no finish_reason"},
		{"incomplete_audio", 0, "delta.audio cannot be merged"},
		{"openai_content", 2, "carried 1 of 2 choices"},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "streams", tc.file+".sse"))
			require.NoError(t, err)
			acc := accumulate(t, readStream(t, raw), tc.choices)
			assert.False(t, acc.Complete())
			body, err := acc.Body()
			assert.Nil(t, body)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.why)
		})
	}

	t.Run("nothing", func(t *testing.T) {
		var acc StreamAccumulator
		assert.False(t, acc.Complete())
		_, err := acc.Body()
		assert.ErrorContains(t, err, "no choice")
	})
	t.Run("a tool call index skipped", func(t *testing.T) {
		acc := accumulate(t, [][]byte{
			[]byte(`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`),
		}, 0)
		assert.False(t, acc.Complete())
	})
}

func TestStreamAccumulatorRefusesWhatIsNotAChunk(t *testing.T) {
	cases := map[string]string{
		"not JSON":                 `data: {"id":1}`,
		"truncated":                `{"id":"x","choices":[{"index":0,"delta":{"content":"a"`,
		"an array":                 `[{"choices":[]}]`,
		"a string":                 `"hello"`,
		"empty":                    ``,
		"choices an object":        `{"choices":{"index":0}}`,
		"a choice a string":        `{"choices":["a"]}`,
		"index a string":           `{"choices":[{"index":"0","delta":{}}]}`,
		"index negative":           `{"choices":[{"index":-1,"delta":{}}]}`,
		"index huge":               `{"choices":[{"index":99999999999,"delta":{}}]}`,
		"index fractional":         `{"choices":[{"index":0.5,"delta":{}}]}`,
		"index past n's limit":     `{"choices":[{"index":128,"delta":{}}]}`,
		"delta a string":           `{"choices":[{"index":0,"delta":"hi"}]}`,
		"content a number":         `{"choices":[{"index":0,"delta":{"content":5}}]}`,
		"refusal an object":        `{"choices":[{"index":0,"delta":{"refusal":{}}}]}`,
		"tool_calls an object":     `{"choices":[{"index":0,"delta":{"tool_calls":{}}}]}`,
		"tool call index too high": `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":5000,"function":{"arguments":""}}]}}]}`,
		"arguments a number":       `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":1}}]}}]}`,
		"finish_reason a number":   `{"choices":[{"index":0,"delta":{},"finish_reason":1}]}`,
		"usage a string":           `{"choices":[],"usage":"lots"}`,
		"created a string":         `{"created":"now","choices":[]}`,
		"text a number":            `{"object":"text_completion","choices":[{"index":0,"text":1}]}`,
		"logprobs an array":        `{"choices":[{"index":0,"delta":{},"logprobs":[1]}]}`,
		"chat after text": `{"object":"text_completion","choices":[{"index":0,"text":"a"}]}` + "\n" +
			`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}`,
	}
	for name, payloads := range cases {
		t.Run(name, func(t *testing.T) {
			var acc StreamAccumulator
			var err error
			for _, p := range strings.Split(payloads, "\n") {
				if err = acc.Add([]byte(p)); err != nil {
					break
				}
			}
			require.Error(t, err)
			assert.False(t, acc.Complete())
		})
	}
}

func TestStreamAccumulatorMerges(t *testing.T) {
	cases := []struct {
		name   string
		chunks []string
		want   string
	}{
		{
			name: "the legacy function_call, and a name some servers repeat",
			chunks: []string{
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":null,"function_call":{"name":"get_weather","arguments":""}},"finish_reason":null}]}`,
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"function_call":{"name":"get_weather","arguments":"{\"city\":"}},"finish_reason":null}]}`,
				`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"function_call":{"arguments":"\"Oslo\"}"}},"finish_reason":"function_call"}]}`,
			},
			want: `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,` +
				`"function_call":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},"logprobs":null,"finish_reason":"function_call"}]}`,
		},
		{
			name: "tool calls without an index, told apart by their ids; a type never sent is function",
			chunks: []string{
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}`,
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{\"x\""}}]}}]}`,
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":":1}"}}]},"finish_reason":"tool_calls"}]}`,
			},
			want: `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{\"x\":1}"}}]},` +
				`"logprobs":null,"finish_reason":"tool_calls"}]}`,
		},
		{
			name: "content and finish_reason in one chunk, an empty finish_reason before, whitespace and [DONE]",
			chunks: []string{
				"  {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"Hi\"},\"finish_reason\":\"\"}]}\n",
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"length"}]}`,
				`[DONE]`,
			},
			want: `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"logprobs":null,"finish_reason":"length"}]}`,
		},
		{
			name: "no object: the choices say chat; annotations appended",
			chunks: []string{
				`{"id":"x","choices":[{"index":0,"delta":{"role":"assistant","content":"See","annotations":[]}}]}`,
				`{"id":"x","choices":[{"index":0,"delta":{"content":" [1]","annotations":[{"type":"url_citation","url_citation":{"url":"https://example.com"}}]}}]}`,
				`{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
			want: `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"See [1]",` +
				`"annotations":[{"type":"url_citation","url_citation":{"url":"https://example.com"}}]},"logprobs":null,"finish_reason":"stop"}]}`,
		},
		{
			name: "text completions with n=2, usage taken from the last chunk that has one",
			chunks: []string{
				`{"id":"cmpl-1","object":"text_completion","created":5,"model":"m","choices":[{"text":"a","index":0,"logprobs":null,"finish_reason":null}],"usage":null}`,
				`{"id":"cmpl-1","object":"text_completion","created":5,"model":"m","choices":[{"text":"b","index":1,"logprobs":null,"finish_reason":"length"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`,
				`{"id":"cmpl-1","object":"text_completion","created":5,"model":"m","choices":[{"text":"c","index":0,"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}`,
			},
			want: `{"id":"cmpl-1","object":"text_completion","created":5,"model":"m","choices":[` +
				`{"text":"ac","index":0,"logprobs":null,"finish_reason":"stop"},{"text":"b","index":1,"logprobs":null,"finish_reason":"length"}],` +
				`"usage":{"prompt_tokens":1,"completion_tokens":3,"total_tokens":4}}`,
		},
		{
			name: "thinking blocks between runs of text, and a redacted one (Anthropic's interleaved thinking)",
			chunks: []string{
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}`,
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content_blocks":[{"index":0,"delta":{"thinking":"first"}}]}}]}`,
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content_blocks":[{"index":0,"delta":{"signature":"s1"}}]}}]}`,
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"one "}}]}`,
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content_blocks":[{"index":2,"delta":{"data":"EmwKAhgB"}}]}}]}`,
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content_blocks":[{"index":3,"delta":{"thinking":"second","signature":"s2"}}]}}]}`,
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"two"}}]}`,
				`{"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			},
			want: `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"one two","content_blocks":[` +
				`{"type":"thinking","thinking":"first","signature":"s1"},{"type":"text","text":"one "},{"type":"redacted_thinking","data":"EmwKAhgB"},` +
				`{"type":"thinking","thinking":"second","signature":"s2"},{"type":"text","text":"two"}]},"logprobs":null,"finish_reason":"stop"}]}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			chunks := make([][]byte, len(tc.chunks))
			for i, c := range tc.chunks {
				chunks[i] = []byte(c)
			}
			acc := accumulate(t, chunks, 0)
			got, err := acc.Body()
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
		})
	}
}

// TestStreamAccumulatorOpenAIStandIn accumulates what the repository's OpenAI stand-in
// streams, as the openaicompat adapter passes it on unchanged.
func TestStreamAccumulatorOpenAIStandIn(t *testing.T) {
	weather := `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`
	cases := []struct {
		name, path, body, want string
	}{
		{
			name: "chat content with usage",
			path: "/v1/chat/completions",
			body: `{"model":"gpt-4o","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"say hello"}]}`,
			want: `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o","system_fingerprint":"fp_standin","choices":[{"index":0,` +
				`"message":{"role":"assistant","content":"w0 w1 w2 w3 w4 ","refusal":null},"logprobs":null,"finish_reason":"stop"}],` +
				`"usage":{"prompt_tokens":2,"completion_tokens":5,"total_tokens":7,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},` +
				`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`,
		},
		{
			name: "chat tool call",
			path: "/v1/chat/completions",
			body: `{"model":"gpt-4o","stream":true,"messages":[{"role":"user","content":"weather?"}],"tools":[` + weather + `]}`,
			want: `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o","system_fingerprint":"fp_standin","choices":[{"index":0,` +
				`"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1_0","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"stand-in\"}"}}]},` +
				`"logprobs":null,"finish_reason":"tool_calls"}]}`,
		},
		{
			name: "text completion with usage",
			path: "/v1/completions",
			body: `{"model":"gpt-3.5-turbo-instruct","stream":true,"stream_options":{"include_usage":true},"prompt":"Say this"}`,
			want: `{"id":"cmpl-1","object":"text_completion","model":"gpt-3.5-turbo-instruct","system_fingerprint":"fp_standin","choices":[{"index":0,` +
				`"text":"w0 w1 w2 w3 w4 ","logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":2,"completion_tokens":5,"total_tokens":7}}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			chunks := standInStream(t, tc.path, tc.body)
			acc := accumulate(t, chunks, 1)
			got, err := acc.Body()
			require.NoError(t, err)
			// created is the stand-in's clock.
			assert.JSONEq(t, tc.want, string(withoutMember(t, got, "created")))
		})
	}
}

// BenchmarkStreamAccumulator is the cost per chunk of caching a streamed answer.
func BenchmarkStreamAccumulator(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "streams", "openai_content.sse"))
	require.NoError(b, err)
	chunks := readStream(b, raw)
	b.ReportAllocs()
	for b.Loop() {
		var acc StreamAccumulator
		for _, c := range chunks {
			_ = acc.Add(c)
		}
		_, _ = acc.Body()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(chunks)), "ns/chunk")
}

func FuzzStreamAccumulator(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "streams", "*.sse"))
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(bytes.Join(readStream(f, raw), []byte("\n")))
	}
	f.Fuzz(func(t *testing.T, stream []byte) {
		var acc StreamAccumulator
		for _, chunk := range bytes.Split(stream, []byte("\n")) {
			_ = acc.Add(chunk)
		}
		body, err := acc.Body()
		if !acc.Complete() {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		requireValidJSON(t, body)
		// A whole answer replays as a stream that accumulates to the very same bytes.
		chunks, err := ReplayStream(body, true)
		require.NoError(t, err, "%s", body)
		again := &StreamAccumulator{}
		for _, c := range chunks {
			requireValidJSON(t, c)
			require.NoError(t, again.Add(c), "%s", c)
		}
		require.True(t, again.Complete(), "%s", body)
		replayed, err := again.Body()
		require.NoError(t, err)
		require.Equal(t, string(body), string(replayed))
	})
}
