package openai

// Token estimates for rate limits on tokens, which must decide before the provider reports the
// answer's usage. They are deliberately cheap: one byte count, no tokenizer. A token is taken as
// 4 bytes of UTF-8, OpenAI's rule of thumb for English (about 4 characters a token); counting
// bytes rather than characters keeps scripts that need more tokens per character (CJK, 3 bytes
// a character) from being badly underestimated. Token ids sent as such count exactly. Only the
// prompt is estimated: the answer's length is unknown, bounded at most by OutputLimit times N.

// Framing tokens of OpenAI's chat format, after its cookbook's counting recipe: each message
// costs about 4 tokens beyond its text (3 of framing, 1 for the role), and every answer is
// primed with 3.
const (
	tokensPerMessage = 4
	tokensPerReply   = 3
)

func bytesToTokens(n int) int { return (n + 3) / 4 }

// EstimateTokens estimates a chat request's prompt tokens: its messages' text, names, tool calls
// and tool definitions at 4 bytes a token, plus the chat format's framing. Non-text content
// (images, audio, files) is not counted.
func EstimateTokens(req *ChatRequest) int {
	n := req.toolBytes + req.functionBytes
	for _, m := range req.Messages {
		n += len(m.Text) + len(m.Name) + m.callBytes
	}
	return bytesToTokens(n) + tokensPerMessage*len(req.Messages) + tokensPerReply
}

// EstimateCompletionTokens estimates a text completion's prompt tokens.
func EstimateCompletionTokens(req *CompletionRequest) int {
	n := 0
	for _, p := range req.Prompts {
		n += len(p)
	}
	return bytesToTokens(n) + req.PromptTokenIDs
}

// EstimateEmbeddingTokens estimates an embeddings request's input tokens.
func EstimateEmbeddingTokens(req *EmbeddingRequest) int {
	n := 0
	for _, in := range req.Inputs {
		n += len(in)
	}
	return bytesToTokens(n) + req.InputTokenIDs
}

// EstimateRerankTokens estimates a rerank request's tokens: the query is read with every
// document.
func EstimateRerankTokens(req *RerankRequest) int {
	n := 0
	for _, d := range req.Documents {
		n += len(req.Query) + len(d.Text)
	}
	return bytesToTokens(n)
}
