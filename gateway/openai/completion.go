package openai

import "encoding/json"

// CompletionRequest is a text completion body (specification 2.4) that passed validation.
type CompletionRequest struct {
	Model string
	// Prompts holds the prompts sent as text; PromptTokenIDs counts the token ids of prompts
	// sent as arrays of token ids.
	Prompts        []string
	PromptTokenIDs int
	Stream         bool
	StreamOptions  StreamOptions
	N              int // 1 when absent
	BestOf         int // 1 when absent
	MaxTokens      int // 16 when absent, OpenAI's default
	Echo           bool
	User           string
	// Raw is the body exactly as received (it shares the slice given to ParseCompletion).
	Raw json.RawMessage
}

// Limits of part 8 that apply to text completions.
const (
	MaxBestOf              = 20
	MaxCompletionLogprobs  = 5
	DefaultCompletionLimit = 16 // max_tokens when absent
)

// ParseCompletion validates a text completion body; unknown fields are kept in Raw.
//
// best_of must exceed n (2.4), with one exception: best_of and n both 1, the defaults, which
// clients such as LangChain send explicitly on every call. For the same reason best_of refuses
// streaming only when it asks for more than one candidate: best_of 1 generates nothing extra.
func ParseCompletion(body []byte) (*CompletionRequest, error) {
	v, top, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	req := &CompletionRequest{Raw: body, N: 1, BestOf: 1, MaxTokens: DefaultCompletionLimit}
	req.Model = top.model()
	if top.required("prompt") {
		raw, _ := top.raw("prompt")
		req.Prompts, req.PromptTokenIDs = v.textsOrTokens(raw, "prompt", true)
	}
	bestOf, hasBestOf := top.integer("best_of", 0, MaxBestOf)
	req.Echo, _ = top.boolean("echo")
	top.penalties()
	top.logitBias()
	top.integer("logprobs", 0, MaxCompletionLogprobs)
	if m, ok := top.integer("max_tokens", 0, noMax); ok {
		req.MaxTokens = m
	}
	n, hasN := top.integer("n", 1, MaxChoices)
	if hasN {
		req.N = n
	}
	top.integer("seed", -noMax-1, noMax)
	top.stop()
	req.Stream, _ = top.boolean("stream")
	req.StreamOptions = top.streamOptions(req.Stream)
	top.str("suffix")
	top.sampling()
	req.User, _ = top.str("user")
	if hasBestOf {
		req.BestOf = bestOf
		if hasN && (bestOf < n || bestOf == n && bestOf > 1) {
			v.fail("best_of", "best_of must be greater than n (got best_of %d and n %d)", bestOf, n)
		}
		if bestOf > 1 && req.Stream {
			v.fail("best_of", "best_of cannot be used with stream: its candidates are compared before any is returned")
		}
	}
	if v.err != nil {
		return nil, v.err
	}
	return req, nil
}

// textsOrTokens reads a prompt or an embedding input: a string, an array of strings, an array
// of token ids, or an array of arrays of token ids. Arrays must not be empty, nor mix shapes.
func (v *validator) textsOrTokens(raw json.RawMessage, param string, emptyString bool) (texts []string, tokens int) {
	const shapes = "a string, an array of strings, an array of token ids or an array of token id arrays"
	switch kindOf(raw) {
	case kindString:
		s, ok := v.asString(raw, param)
		if ok && s == "" && !emptyString {
			v.fail(param, "%s must not be an empty string", param)
		}
		return []string{s}, 0
	case kindArray:
	default:
		v.typeError(param, shapes, raw)
		return nil, 0
	}
	items, ok := v.asArray(raw, param)
	if !ok {
		return nil, 0
	}
	if len(items) == 0 {
		v.fail(param, "%s must not be an empty array", param)
		return nil, 0
	}
	first := kindOf(items[0])
	for i, it := range items {
		p := indexParam(param, i)
		if k := kindOf(it); k != first {
			v.fail(p, "%s must be %s like %s[0], not %s", p, first.article(), param, k.article())
			return nil, 0
		}
		switch first {
		case kindString:
			s, _ := v.asString(it, p)
			texts = append(texts, s)
		case kindNumber:
			v.tokenID(it, p)
			tokens++
		case kindArray:
			ids, ok := v.asArray(it, p)
			if !ok {
				return nil, 0
			}
			if len(ids) == 0 {
				v.fail(p, "%s must not be an empty array", p)
			}
			for j, id := range ids {
				v.tokenID(id, indexParam(p, j))
			}
			tokens += len(ids)
		default:
			v.typeError(param, shapes, raw)
		}
		if v.failed() {
			return nil, 0
		}
	}
	return texts, tokens
}

func (v *validator) tokenID(raw json.RawMessage, param string) {
	if i, ok := v.asInt(raw, param); ok && i < 0 {
		v.fail(param, "%s must be a token id, an integer of at least 0 (got %d)", param, i)
	}
}
