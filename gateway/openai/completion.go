package openai

import "encoding/json"

// CompletionRequest is a text completion body (specification 2.4) that passed validation, read
// into Go. A member the body did not send leaves its field at the zero value (nil for
// pointers), except N and BestOf (1) and MaxTokens (16).
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

	Temperature      *float64
	TopP             *float64
	PresencePenalty  *float64
	FrequencyPenalty *float64
	Seed             *int64
	Stop             []string
	// Logprobs is the number of most likely tokens to return with each token; nil when absent.
	Logprobs  *int
	LogitBias map[string]float64
	Suffix    string
	// Extra holds the members no field above reads, in the body's order.
	Extra Members
	// Raw is the body exactly as received (it shares the slice given to ParseCompletion).
	Raw json.RawMessage

	members []member
}

// Limits of part 8 that apply to text completions.
const (
	MaxBestOf              = 20
	MaxCompletionLogprobs  = 5
	DefaultCompletionLimit = 16 // max_tokens when absent
)

// completionFields read a text completion body, in the validator's order.
var completionFields = []field[CompletionRequest]{
	{keys("model"), func(o obj, r *CompletionRequest) { r.Model = o.model() }},
	{keys("prompt"), func(o obj, r *CompletionRequest) {
		r.Prompts, r.PromptTokenIDs = nil, 0
		if o.required("prompt") {
			raw, _ := o.raw("prompt")
			r.Prompts, r.PromptTokenIDs = o.v.textsOrTokens(raw, "prompt", true)
		}
	}},
	{keys("best_of"), func(o obj, r *CompletionRequest) {
		r.BestOf = 1
		if b, ok := o.integer("best_of", 0, MaxBestOf); ok {
			r.BestOf = b
		}
	}},
	{keys("echo"), func(o obj, r *CompletionRequest) { r.Echo, _ = o.boolean("echo") }},
	{keys("frequency_penalty"), func(o obj, r *CompletionRequest) {
		r.FrequencyPenalty = o.numberPtr("frequency_penalty", -2, 2)
	}},
	{keys("presence_penalty"), func(o obj, r *CompletionRequest) {
		r.PresencePenalty = o.numberPtr("presence_penalty", -2, 2)
	}},
	{keys("logit_bias"), func(o obj, r *CompletionRequest) { r.LogitBias = o.logitBias() }},
	{keys("logprobs"), func(o obj, r *CompletionRequest) {
		r.Logprobs = nil
		if n, ok := o.integer("logprobs", 0, MaxCompletionLogprobs); ok {
			r.Logprobs = &n
		}
	}},
	{keys("max_tokens"), func(o obj, r *CompletionRequest) {
		r.MaxTokens = DefaultCompletionLimit
		if m, ok := o.integer("max_tokens", 0, noMax); ok {
			r.MaxTokens = m
		}
	}},
	{keys("n"), func(o obj, r *CompletionRequest) { r.N = o.choices() }},
	{keys("seed"), func(o obj, r *CompletionRequest) { r.Seed = o.seed() }},
	{keys("stop"), func(o obj, r *CompletionRequest) { r.Stop = o.stop() }},
	{keys("stream", "stream_options"), func(o obj, r *CompletionRequest) {
		r.Stream, _ = o.boolean("stream")
		r.StreamOptions = o.streamOptions(r.Stream)
	}},
	{keys("suffix"), func(o obj, r *CompletionRequest) { r.Suffix, _ = o.str("suffix") }},
	{keys("temperature"), func(o obj, r *CompletionRequest) { r.Temperature = o.numberPtr("temperature", 0, 2) }},
	{keys("top_p"), func(o obj, r *CompletionRequest) { r.TopP = o.numberPtr("top_p", 0, 1) }},
	{keys("user"), func(o obj, r *CompletionRequest) { r.User, _ = o.str("user") }},
	// best_of is checked against n and stream once both are read.
	{keys("best_of", "n", "stream"), func(o obj, r *CompletionRequest) {
		if !o.has("best_of") || o.v.failed() {
			return
		}
		if o.has("n") && (r.BestOf < r.N || r.BestOf == r.N && r.BestOf > 1) {
			o.v.fail("best_of", "best_of must be greater than n (got best_of %d and n %d)", r.BestOf, r.N)
		}
		if r.BestOf > 1 && r.Stream {
			o.v.fail("best_of", "best_of cannot be used with stream: its candidates are compared before any is returned")
		}
	}},
}

var completionKnown = knownKeys(completionFields)

// ParseCompletion validates a text completion body and reads it into a CompletionRequest;
// unknown fields are kept in Raw and listed in Extra.
//
// best_of must exceed n (2.4), with one exception: best_of and n both 1, the defaults, which
// clients such as LangChain send explicitly on every call. For the same reason best_of refuses
// streaming only when it asks for more than one candidate: best_of 1 generates nothing extra.
func ParseCompletion(body []byte) (*CompletionRequest, error) {
	v, top, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	req := &CompletionRequest{Raw: body, members: top.members}
	readFields(top, req, completionFields, nil)
	if v.err != nil {
		return nil, v.err
	}
	req.Extra = extra(top.members, completionKnown)
	return req, nil
}

// WithOverrides returns the request with a config's override_params applied, as
// ChatRequest.WithOverrides does.
func (r *CompletionRequest) WithOverrides(overrides map[string]any) (*CompletionRequest, error) {
	if len(overrides) == 0 {
		return r, nil
	}
	out := *r
	if err := override(&out, parsed{&out.Raw, &out.members, &out.Extra}, overrides, completionFields, completionKnown); err != nil {
		return nil, err
	}
	return &out, nil
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
