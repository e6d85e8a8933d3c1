package providers_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/causeway/causeway/gateway/providers"
)

// Answers as the providers send them (platform.openai.com/docs/api-reference: "The response
// object", "Streaming events", "The chat completion object", "The chat completion chunk
// object", "The embedding object").

const responsesJSON = `{
  "id": "resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b",
  "object": "response",
  "created_at": 1741476542,
  "status": "completed",
  "error": null,
  "incomplete_details": null,
  "instructions": null,
  "max_output_tokens": null,
  "model": "gpt-4.1-2025-04-14",
  "output": [
    {
      "type": "message",
      "id": "msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b",
      "status": "completed",
      "role": "assistant",
      "content": [
        {
          "type": "output_text",
          "text": "In a peaceful grove beneath a silver moon, a unicorn named Lumina found a pool. \"usage\": {\"input_tokens\": 999}",
          "annotations": []
        }
      ]
    }
  ],
  "parallel_tool_calls": true,
  "previous_response_id": null,
  "reasoning": {"effort": null, "summary": null},
  "store": true,
  "temperature": 1.0,
  "text": {"format": {"type": "text"}},
  "tool_choice": "auto",
  "tools": [],
  "top_p": 1.0,
  "truncation": "disabled",
  "usage": {
    "input_tokens": 1036,
    "input_tokens_details": {"cached_tokens": 1024},
    "output_tokens": 87,
    "output_tokens_details": {"reasoning_tokens": 64},
    "total_tokens": 1123
  },
  "user": null,
  "metadata": {"usage": {"input_tokens": 5}}
}`

func responsesEvent(typ string, seq int, fields string) string {
	return fmt.Sprintf("event: %s\ndata: {\"type\":%q,\"sequence_number\":%d,%s}\n\n", typ, typ, seq, fields)
}

// responsesSSE is a streamed response: its text in deltas, its usage in response.completed.
func responsesSSE() string {
	resp := func(status, usage string) string {
		return `"response":{"id":"resp_1","object":"response","created_at":1741290958,"status":"` + status +
			`","model":"gpt-4.1-2025-04-14","output":[],"usage":` + usage + `}`
	}
	var b strings.Builder
	b.WriteString(responsesEvent("response.created", 0, resp("in_progress", "null")))
	b.WriteString(responsesEvent("response.in_progress", 1, resp("in_progress", "null")))
	b.WriteString(responsesEvent("response.output_item.added", 2, `"output_index":0,"item":{"id":"msg_1","type":"message","status":"in_progress","role":"assistant","content":[]}`))
	b.WriteString(responsesEvent("response.content_part.added", 3, `"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`))
	for i, d := range []string{"Hi", " there", "! \u00e9"} {
		b.WriteString(responsesEvent("response.output_text.delta", 4+i, fmt.Sprintf(`"item_id":"msg_1","output_index":0,"content_index":0,"delta":%q`, d)))
	}
	b.WriteString(responsesEvent("response.output_text.done", 7, `"item_id":"msg_1","output_index":0,"content_index":0,"text":"Hi there! é"`))
	b.WriteString(responsesEvent("response.completed", 8, resp("completed",
		`{"input_tokens":37,"input_tokens_details":{"cached_tokens":0},"output_tokens":11,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":48}`)))
	return b.String()
}

const chatJSON = `{
  "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
  "object": "chat.completion",
  "created": 1741570283,
  "model": "gpt-4o-2024-08-06",
  "choices": [
    {
      "index": 0,
      "message": {"role": "assistant", "content": "The image shows a wooden boardwalk.", "refusal": null, "annotations": []},
      "logprobs": null,
      "finish_reason": "stop"
    }
  ],
  "usage": {
    "prompt_tokens": 1117,
    "completion_tokens": 46,
    "total_tokens": 1163,
    "prompt_tokens_details": {"cached_tokens": 1024, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 12, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
  },
  "service_tier": "default",
  "system_fingerprint": "fp_fc9f1d7035"
}`

// chatChunks are a streamed chat completion's events: content (with escapes and characters
// beyond ASCII), a tool call's arguments, then the usage chunk and [DONE].
var chatChunks = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","system_fingerprint":"fp_44709d6fcb","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hello"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":" \"w\u00f6rld\"\n\ud83d\ude00"},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":"}}]},"logprobs":null,"finish_reason":null}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}`,
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1694268190,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":10,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`,
}

// chatText is the text those chunks deliver: "Hello", ` "wörld"` + "\n" + 😀, and the
// arguments {"city":"Paris"}.
var chatText = len("Hello") + len(" \"wörld\"\n😀") + len(`{"city":"Paris"}`)

func chatSSE(chunks []string, done bool) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	if done {
		b.WriteString("data: [DONE]\n\n")
	}
	return b.String()
}

const embeddingsJSON = `{
  "object": "list",
  "data": [
    {"object": "embedding", "index": 0, "embedding": [0.0023064255, -0.009327292, -0.0028842222, 0.017512478]}
  ],
  "model": "text-embedding-3-small",
  "usage": {"prompt_tokens": 8, "total_tokens": 8}
}`

// feeds are the ways an answer arrives: whole, byte by byte, and in pieces of random sizes.
func feeds(body string) map[string][][]byte {
	out := map[string][][]byte{"whole": {[]byte(body)}}
	var bytewise [][]byte
	for i := 0; i < len(body); i++ {
		bytewise = append(bytewise, []byte{body[i]})
	}
	out["byte by byte"] = bytewise
	for n := range 3 {
		out[fmt.Sprintf("random pieces %d", n)] = randomPieces(body, uint64(n), 97)
	}
	return out
}

// randomPieces cuts body into pieces of 1 to most bytes.
func randomPieces(body string, seed uint64, most int) [][]byte {
	r := rand.New(rand.NewPCG(seed, 2))
	var pieces [][]byte
	for rest := body; len(rest) > 0; {
		k := min(len(rest), 1+r.IntN(most))
		pieces = append(pieces, []byte(rest[:k]))
		rest = rest[k:]
	}
	return pieces
}

func TestUsageObserver(t *testing.T) {
	cases := []struct {
		name        string
		contentType string
		body        string
		want        providers.Usage
		found       bool
		text        int
	}{
		{
			name: "a Responses API answer: the top-level usage only", contentType: "application/json",
			body:  responsesJSON,
			want:  providers.Usage{PromptTokens: 1036, CompletionTokens: 87, TotalTokens: 1123, CachedTokens: 1024, ReasoningTokens: 64},
			found: true,
		},
		{
			name: "a streamed Responses API answer: response.completed", contentType: "text/event-stream; charset=utf-8",
			body:  responsesSSE(),
			want:  providers.Usage{PromptTokens: 37, CompletionTokens: 11, TotalTokens: 48},
			found: true, text: len("Hi there! é"),
		},
		{
			name: "a chat completion", contentType: "application/json; charset=utf-8",
			body:  chatJSON,
			want:  providers.Usage{PromptTokens: 1117, CompletionTokens: 46, TotalTokens: 1163, CachedTokens: 1024, ReasoningTokens: 12},
			found: true,
		},
		{
			name: "a streamed chat completion: the usage chunk", contentType: "text/event-stream",
			body:  chatSSE(chatChunks, true),
			want:  providers.Usage{PromptTokens: 19, CompletionTokens: 10, TotalTokens: 29},
			found: true, text: chatText,
		},
		{
			name: "a chat stream abandoned before its usage chunk: the text it delivered", contentType: "text/event-stream",
			body: chatSSE(chatChunks[:5], false),
			text: chatText,
		},
		{
			name: "a chat stream framed with CRLF, its data over two lines", contentType: "text/event-stream",
			body:  strings.ReplaceAll(": keep-alive\n\nevent: message\nid: 7\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ab\"}}],\ndata: \"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":4}}\n\ndata: [DONE]\n\n", "\n", "\r\n"),
			want:  providers.Usage{PromptTokens: 3, CompletionTokens: 1, TotalTokens: 4},
			found: true, text: 2,
		},
		{
			name: "embeddings", contentType: "application/json",
			body:  embeddingsJSON,
			want:  providers.Usage{PromptTokens: 8, TotalTokens: 8},
			found: true,
		},
		{
			name: "an image generation", contentType: "application/json",
			body:  `{"created":1713833628,"data":[{"b64_json":"` + strings.Repeat("iVBORw0KGgo", 2000) + `"}],"usage":{"total_tokens":100,"input_tokens":50,"output_tokens":50,"input_tokens_details":{"text_tokens":10,"image_tokens":40}}}`,
			want:  providers.Usage{PromptTokens: 50, CompletionTokens: 50, TotalTokens: 100},
			found: true,
		},
		{
			name: "a transcription billed by duration: no tokens", contentType: "application/json",
			body: `{"text":"Hello.","usage":{"type":"duration","seconds":3}}`,
		},
		{
			name: "Anthropic's stream: message_delta completes message_start", contentType: "text/event-stream",
			body: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-sonnet-4-5\",\"stop_reason\":null,\"usage\":{\"input_tokens\":25,\"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":10,\"output_tokens\":1}}}\n\n" +
				"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello!\"}}\n\n" +
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n" +
				"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
			want:  providers.Usage{PromptTokens: 135, CompletionTokens: 15, TotalTokens: 150, CachedTokens: 100, CacheWriteTokens: 10},
			found: true, text: len("Hello!"),
		},
		{
			name: "Gemini's usageMetadata", contentType: "application/json",
			body:  `{"candidates":[{"content":{"parts":[{"text":"Hi"}],"role":"model"},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":8,"candidatesTokenCount":2,"totalTokenCount":14,"thoughtsTokenCount":4},"modelVersion":"gemini-2.5-flash"}`,
			want:  providers.Usage{PromptTokens: 8, CompletionTokens: 6, TotalTokens: 14, ReasoningTokens: 4},
			found: true,
		},
		{
			name: "no Content-Type, a JSON object", contentType: "",
			body:  "\n " + embeddingsJSON,
			want:  providers.Usage{PromptTokens: 8, TotalTokens: 8},
			found: true,
		},
		{name: "no Content-Type, not JSON", contentType: "", body: `usage: {"prompt_tokens": 1}`},
		{name: "plain text", contentType: "text/plain", body: `{"usage":{"prompt_tokens":1,"total_tokens":1}}`},
		{name: "audio", contentType: "audio/mpeg", body: "ID3\x04\x00\x00\x00\x00\x00#TSSE\x00\x00\x00\x0f\x00\x00\x03Lavf58.76.100"},
		{name: "JSON that is not JSON", contentType: "application/json", body: `<html><body>502 Bad Gateway</body></html>`},
		{name: "JSON cut short", contentType: "application/json", body: `{"id":"x","usage":{"prompt_tokens":3,"completion_tok`},
		{name: "a usage that is not an object", contentType: "application/json", body: `{"usage":null,"data":[]}`},
		{name: "an empty answer", contentType: "application/json", body: ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for feed, pieces := range feeds(tc.body) {
				obs := providers.NewUsageObserver(tc.contentType)
				for _, p := range pieces {
					before := bytes.Clone(p)
					n, err := obs.Write(p)
					require.NoError(t, err)
					require.Equal(t, len(p), n)
					require.Equal(t, before, p, "the answer's bytes are not changed")
				}
				got, found := obs.Usage()
				assert.Equal(t, tc.found, found, feed)
				assert.Equal(t, tc.want, got, feed)
				assert.Equal(t, tc.text, obs.DeliveredText(), feed)
			}
		})
	}
}

// TestUsageObserverGzip: a compressed answer is not read (the gateway passes it on as it came).
func TestUsageObserverGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write([]byte(chatJSON))
	require.NoError(t, zw.Close())
	obs := providers.NewUsageObserver("application/json")
	_, err := obs.Write(buf.Bytes())
	require.NoError(t, err)
	_, found := obs.Usage()
	assert.False(t, found)
}

// TestUsageObserverLargeAnswers: the answer's size does not matter, only where its usage is.
func TestUsageObserverLargeAnswers(t *testing.T) {
	big := strings.Repeat("A", 4<<20)
	t.Run("a usage after megabytes of output", func(t *testing.T) {
		obs := providers.NewUsageObserver("application/json")
		body := `{"data":[{"b64_json":"` + big + `"}],"usage":{"input_tokens":1,"output_tokens":2,"total_tokens":3}}`
		for _, p := range randomPieces(body, 7, 32<<10) {
			_, _ = obs.Write(p)
		}
		got, found := obs.Usage()
		require.True(t, found)
		assert.Equal(t, providers.Usage{PromptTokens: 1, CompletionTokens: 2, TotalTokens: 3}, got)
	})
	t.Run("an event of megabytes before the usage event", func(t *testing.T) {
		obs := providers.NewUsageObserver("text/event-stream")
		_, _ = obs.Write([]byte(`data: {"type":"response.output_text.delta","delta":"` + big + `"}` + "\n\n"))
		_, _ = obs.Write([]byte(responsesEvent("response.completed", 9, `"response":{"usage":{"input_tokens":4,"output_tokens":5,"total_tokens":9}}`)))
		got, found := obs.Usage()
		require.True(t, found)
		assert.Equal(t, providers.Usage{PromptTokens: 4, CompletionTokens: 5, TotalTokens: 9}, got)
		assert.Equal(t, len(big), obs.DeliveredText())
	})
	t.Run("a usage object too large to be one is not read", func(t *testing.T) {
		obs := providers.NewUsageObserver("application/json")
		_, _ = obs.Write([]byte(`{"usage":{"prompt_tokens":1,"total_tokens":1,"note":"` + strings.Repeat("x", 32<<10) + `"}}`))
		_, found := obs.Usage()
		assert.False(t, found)
	})
	t.Run("nesting deeper than the scanner follows", func(t *testing.T) {
		obs := providers.NewUsageObserver("application/json")
		deep := strings.Repeat(`{"a":[`, 100) + `1` + strings.Repeat(`]}`, 100)
		_, _ = obs.Write([]byte(`{"x":` + deep + `,"usage":{"prompt_tokens":2,"total_tokens":2}}`))
		got, found := obs.Usage()
		require.True(t, found)
		assert.Equal(t, 2, got.PromptTokens)
	})
}

// BenchmarkUsageObserver is what observing costs per answer byte: a streamed chat answer, and a
// JSON answer that is mostly one long string (an image).
func BenchmarkUsageObserver(b *testing.B) {
	image := `{"created":1713833628,"data":[{"b64_json":"` + strings.Repeat("iVBORw0KGgo", 100_000) + `"}],"usage":{"total_tokens":100,"input_tokens":50,"output_tokens":50}}`
	for _, bc := range []struct{ name, contentType, body string }{
		{"chat stream", "text/event-stream", chatSSE(chatChunks, true)},
		{"responses stream", "text/event-stream", responsesSSE()},
		{"image JSON", "application/json", image},
	} {
		pieces := randomPieces(bc.body, 3, 4<<10)
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.body)))
			for b.Loop() {
				obs := providers.NewUsageObserver(bc.contentType)
				for _, p := range pieces {
					_, _ = obs.Write(p)
				}
				if _, found := obs.Usage(); !found {
					b.Fatal("no usage")
				}
			}
		})
	}
}
