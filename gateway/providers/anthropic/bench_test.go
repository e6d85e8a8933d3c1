package anthropic

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/causeway/causeway/gateway/openai"
	"github.com/causeway/causeway/gateway/providers"
	"github.com/causeway/causeway/gateway/providers/providertest"
)

// benchChat is a typical agent turn: a system prompt, a few turns, a tool call and its result,
// an image, two tools.
var benchChat = `{"model":"claude-sonnet-4-5","messages":[` +
	`{"role":"system","content":"` + strings.Repeat("You are a helpful assistant. ", 20) + `"},` +
	`{"role":"user","content":"What is the weather in Paris and in Berlin today?"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
	`{"role":"tool","tool_call_id":"call_1","content":"{\"temp\":21,\"sky\":\"clear\"}"},` +
	`{"role":"user","content":[{"type":"text","text":"And this picture?"},{"type":"image_url","image_url":{"url":"https://example.com/a.png"}}]}],` +
	`"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},` +
	`{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}],` +
	`"tool_choice":"auto","temperature":0.7,"max_tokens":512}`

// benchCalls are the calls of benchChat: carrying the request the gateway parsed (model), and
// of bytes alone, which the adapter parses (body).
func benchCalls(b *testing.B) (model, body providers.Call) {
	parsed, err := openai.ParseChat([]byte(benchChat))
	if err != nil {
		b.Fatal(err)
	}
	return providers.Call{Endpoint: providers.EndpointChat, Model: parsed.Model, Body: parsed.Raw, Chat: parsed},
		providers.Call{Endpoint: providers.EndpointChat, Model: "claude-sonnet-4-5", Body: json.RawMessage(benchChat)}
}

// BenchmarkAnthropicChat is one whole chat call through the Anthropic adapter against its
// stand-in: translation, the round trip on 127.0.0.1 (the stand-in's work included), and the
// answer's translation. model: the call carries the request the gateway parsed; parse+model:
// the gateway's parse counted too; body: a call of bytes alone, which the adapter parses.
func BenchmarkAnthropicChat(b *testing.B) {
	s := providertest.NewAnthropic(b)
	a := New(nil)
	target := providers.Target{Provider: "anthropic", BaseURL: s.BaseURL(), APIKey: "sk-ant-bench"}
	model, body := benchCalls(b)
	run := func(b *testing.B, call func() providers.Call) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := a.Chat(context.Background(), target, call()); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("model", func(b *testing.B) {
		run(b, func() providers.Call { return model })
	})
	b.Run("parse+model", func(b *testing.B) {
		run(b, func() providers.Call {
			req, err := openai.ParseChat([]byte(benchChat))
			if err != nil {
				b.Fatal(err)
			}
			return providers.Call{Endpoint: providers.EndpointChat, Model: req.Model, Body: req.Raw, Chat: req}
		})
	})
	b.Run("body", func(b *testing.B) {
		run(b, func() providers.Call { return body })
	})
}

// BenchmarkAnthropicBuild is the request's translation alone: from the parsed request (model),
// and from bytes alone (body).
func BenchmarkAnthropicBuild(b *testing.B) {
	model, body := benchCalls(b)
	for _, bc := range []struct {
		name string
		call providers.Call
	}{
		{"model", model},
		{"body", body},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := (family{}).Build(providers.Target{}, bc.call, false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
