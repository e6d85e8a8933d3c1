package openai

import (
	"strings"
	"testing"
)

// A typical agent turn: a system prompt, a few turns, a tool call and its result, two tools.
var benchChat = []byte(`{"model":"gpt-4o-mini","messages":[` +
	`{"role":"system","content":"` + strings.Repeat("You are a helpful assistant. ", 20) + `"},` +
	`{"role":"user","content":"What is the weather in Paris and in Berlin today?"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
	`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":21,\"sky\":\"clear\"}"},` +
	`{"role":"user","content":[{"type":"text","text":"And this picture?"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}],` +
	`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},` +
	`{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}],` +
	`"tool_choice":"auto","temperature":0.7,"max_tokens":512,"stream":true,"stream_options":{"include_usage":true}}`)

func BenchmarkParseChat(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchChat)))
	for b.Loop() {
		if _, err := ParseChat(benchChat); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWithOverrides(b *testing.B) {
	overrides := map[string]any{"model": "gpt-4o", "temperature": 0.2}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchChat)))
	for b.Loop() {
		if _, err := WithOverrides(benchChat, overrides); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChatRequestWithOverrides overrides a parsed request: the body spliced, and only the
// overridden members read again.
func BenchmarkChatRequestWithOverrides(b *testing.B) {
	req, err := ParseChat(benchChat)
	if err != nil {
		b.Fatal(err)
	}
	overrides := map[string]any{"model": "gpt-4o", "temperature": 0.2}
	b.ReportAllocs()
	b.SetBytes(int64(len(benchChat)))
	for b.Loop() {
		if _, err := req.WithOverrides(overrides); err != nil {
			b.Fatal(err)
		}
	}
}
