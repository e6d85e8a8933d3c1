package guardrails

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// benchInput is a typical chat exchange of about 1 KB: a system prompt, two turns and an
// answer, with an email in the last message for the PII check to find.
func benchInput(tb testing.TB, hook Hook) Input {
	para := "The quarterly report shows revenue growth across every region, with the strongest gains in " +
		"the northern markets. Please summarise the key drivers and list the risks for next quarter. "
	req := map[string]any{
		"model": "gpt-4o-mini", "temperature": 0.2, "max_tokens": 512, "stream": false,
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "lookup"}}},
		"messages": []any{
			map[string]any{"role": "system", "content": "You are a careful financial analyst. Answer in plain English."},
			map[string]any{"role": "user", "content": para},
			map[string]any{"role": "assistant", "content": "Revenue grew 12%, led by the north. Risks: currency, supply."},
			map[string]any{"role": "user", "content": para + para + "Send it to analyst@example.com when done."},
		},
	}
	answer := map[string]any{"id": "x", "object": "chat.completion", "choices": []any{map[string]any{
		"index": 0, "finish_reason": "stop",
		"message": map[string]any{"role": "assistant", "content": "```json\n{\"summary\": \"Growth of 12% led by the north.\", \"risks\": [\"currency\", \"supply\"]}\n```\n" +
			strings.Repeat("Revenue grew in every region. ", 12) + "See https://example.com/report for details. Done."},
	}}}
	reqB, _ := json.Marshal(req)
	ansB, _ := json.Marshal(answer)
	in := Input{Hook: hook, Endpoint: "chatComplete", Provider: "openai", Model: "gpt-4o-mini",
		Metadata: map[string]string{"env": "prod", "team": "finance"}, Request: reqB, Final: true}
	if hook == AfterRequest {
		in.Response = ansB
	}
	in.Text = ExtractText(hook, hookBody(in))
	if len(reqB) < 900 || len(reqB) > 1400 {
		tb.Fatalf("the request is %d bytes, not about 1 KB", len(reqB))
	}
	return in
}

// benchParams are typical parameters for each local check, and the hook it belongs on.
var benchParams = map[string]struct {
	hook   Hook
	params P
}{
	"default.regexMatch":               {AfterRequest, P{"rule": `\b(inappropriate|banned|harmful)\b`, "not": true}},
	"default.regexReplace":             {BeforeRequest, P{"rule": `/\b\d{4}\b/g`}},
	"default.sentenceCount":            {AfterRequest, P{"minSentences": 1, "maxSentences": 50}},
	"default.wordCount":                {AfterRequest, P{"minWords": 5, "maxWords": 500}},
	"default.characterCount":           {AfterRequest, P{"minCharacters": 10, "maxCharacters": 4000}},
	"default.jsonSchema":               {AfterRequest, P{"schema": P{"type": "object", "required": []any{"summary"}, "properties": P{"summary": P{"type": "string"}}}}},
	"default.jsonKeys":                 {AfterRequest, P{"keys": []any{"summary", "risks"}, "operator": "all"}},
	"default.contains":                 {AfterRequest, P{"words": []any{"darn", "heck"}, "operator": "none"}},
	"default.validUrls":                {AfterRequest, P{}},
	"default.containsCode":             {AfterRequest, P{"format": "SQL", "not": true}},
	"default.endsWith":                 {AfterRequest, P{"suffix": "Done"}},
	"default.alluppercase":             {AfterRequest, P{"not": true}},
	"default.alllowercase":             {AfterRequest, P{"not": true}},
	"default.isAllLowerCase":           {AfterRequest, P{"not": true}},
	"default.notNull":                  {AfterRequest, P{}},
	"default.modelWhitelist":           {BeforeRequest, P{"models": []any{"gpt-4o", "gpt-4o-mini"}}},
	"default.modelRules":               {BeforeRequest, P{"rules": P{"defaults": []any{"gpt-4o-mini"}, "metadata": P{"team": P{"finance": []any{"gpt-4o"}}}}}},
	"default.requiredMetadataKeys":     {BeforeRequest, P{"metadataKeys": []any{"env", "team"}}},
	"default.requiredMetadataKeyPairs": {BeforeRequest, P{"metadataPairs": P{"env": "prod"}}},
	"default.requestParametersCheck": {BeforeRequest, P{
		"tools":  P{"allowedTypes": []any{"function"}, "blockedFunctionNames": []any{"shell"}},
		"params": P{"blockedKeys": []any{"logit_bias"}, "values": P{"temperature": P{"allowedValues": []any{0, 0.2, 0.7}}}},
	}},
	"default.allowedRequestTypes": {BeforeRequest, P{"allowedTypes": []any{"chatComplete", "embed"}}},
	"default.addPrefix":           {BeforeRequest, P{"prefix": "Answer briefly. "}},
	"default.pii":                 {BeforeRequest, P{"redact": true}},
}

func BenchmarkCheck(b *testing.B) {
	reg := NewRegistry()
	for _, id := range reg.IDs() {
		bp, ok := benchParams[id]
		if !ok {
			b.Fatalf("no benchmark parameters for %s", id)
		}
		b.Run(id, func(b *testing.B) {
			c, err := reg.Build(id, decoded(b, bp.params), Deps{})
			if err != nil {
				b.Fatal(err)
			}
			in := benchInput(b, bp.hook)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := c.Run(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkHook compares five checks of a small simulated cost (a 1 ms wait, as a quick
// outbound call) run by the runner side by side with the same five run one after the other.
func BenchmarkHook(b *testing.B) {
	costly := checkFunc(func(ctx context.Context, in Input) (Verdict, error) {
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return Verdict{}, ctx.Err()
		}
		return Verdict{Pass: strings.Contains(in.Text, "e")}, nil
	})
	var gs []Guardrail
	for i := 0; i < 5; i++ {
		gs = append(gs, Guardrail{ID: "g", Checks: []Configured{{ID: "c", Check: costly}}})
	}
	in := benchInput(b, AfterRequest)
	ctx := context.Background()
	b.Run("five-concurrent", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if res := Run(ctx, AfterRequest, gs, in); !res.Guardrails[4].Verdict {
				b.Fatal("failed")
			}
		}
	})
	b.Run("five-sequential", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			for j := range gs {
				if res := Run(ctx, AfterRequest, gs[j:j+1], in); !res.Guardrails[0].Verdict {
					b.Fatal("failed")
				}
			}
		}
	})
}
