package providers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/causeway/causeway/gateway/openai"
)

var benchBuildChat = `{"model":"claude-sonnet-4-5","messages":[` +
	`{"role":"system","content":"` + strings.Repeat("You are a helpful assistant. ", 20) + `"},` +
	`{"role":"user","content":"What is the weather in Paris and in Berlin today?"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
	`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":21,\"sky\":\"clear\"}"},` +
	`{"role":"user","content":[{"type":"text","text":"And this picture?"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}],` +
	`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},` +
	`{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}],` +
	`"tool_choice":"auto","temperature":0.7,"max_tokens":512}`

// BenchmarkAnthropicBuild is the request's translation alone: from the parsed request (model),
// and from bytes alone (body).
func BenchmarkAnthropicBuild(b *testing.B) {
	parsed, err := openai.ParseChat([]byte(benchBuildChat))
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		call Call
	}{
		{"model", Call{Endpoint: EndpointChat, Model: parsed.Model, Body: parsed.Raw, Chat: parsed}},
		{"body", Call{Endpoint: EndpointChat, Model: "claude-sonnet-4-5", Body: json.RawMessage(benchBuildChat)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := anthropicBuild(Target{}, bc.call, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
