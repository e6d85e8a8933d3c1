package openaicompat

import "testing"

// BenchmarkUsageOf is the usage read of a whole chat answer, on every non-streamed request.
func BenchmarkUsageOf(b *testing.B) {
	body := []byte(`{"id":"chatcmpl-123","object":"chat.completion","created":1795527089,"model":"gpt-4o-mini","choices":[{"index":0,"message":{"role":"assistant","content":"Hello! How can I help you today? I am here to answer any question you may have.","refusal":null,"annotations":[]},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":19,"completion_tokens":17,"total_tokens":36,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_standin"}`)
	b.ReportAllocs()
	for b.Loop() {
		if u := usageOf(body); u.TotalTokens != 36 {
			b.Fatal(u)
		}
	}
}
