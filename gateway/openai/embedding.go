package openai

import "encoding/json"

// EmbeddingRequest is an embeddings body that passed validation, read into Go.
type EmbeddingRequest struct {
	Model string
	// Inputs holds the inputs sent as text; InputTokenIDs counts the token ids of inputs sent
	// as arrays of token ids.
	Inputs         []string
	InputTokenIDs  int
	Dimensions     int // 0 when absent
	EncodingFormat string
	User           string
	// Extra holds the members no field above reads (input_type, truncate), in the body's order.
	Extra Members
	// Raw is the body exactly as received (it shares the slice given to ParseEmbedding).
	Raw json.RawMessage

	members []member
}

var embeddingFields = []field[EmbeddingRequest]{
	{keys("model"), func(o obj, r *EmbeddingRequest) { r.Model = o.model() }},
	{keys("input"), func(o obj, r *EmbeddingRequest) {
		r.Inputs, r.InputTokenIDs = nil, 0
		if o.required("input") {
			raw, _ := o.raw("input")
			r.Inputs, r.InputTokenIDs = o.v.textsOrTokens(raw, "input", false)
		}
	}},
	{keys("dimensions"), func(o obj, r *EmbeddingRequest) { r.Dimensions, _ = o.integer("dimensions", 1, noMax) }},
	{keys("encoding_format"), func(o obj, r *EmbeddingRequest) { r.EncodingFormat, _ = o.str("encoding_format") }},
	{keys("user"), func(o obj, r *EmbeddingRequest) { r.User, _ = o.str("user") }},
}

var embeddingKnown = knownKeys(embeddingFields)

// ParseEmbedding validates an embeddings body: model and input are required, and input is a
// non-empty string, or a non-empty array of strings, of token ids or of token id arrays.
// encoding_format is only checked to be a string, as compatible providers add formats of their
// own (int8, binary). Unknown fields are kept in Raw and listed in Extra.
func ParseEmbedding(body []byte) (*EmbeddingRequest, error) {
	v, top, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	req := &EmbeddingRequest{Raw: body, members: top.members}
	readFields(top, req, embeddingFields, nil)
	if v.err != nil {
		return nil, v.err
	}
	req.Extra = extra(top.members, embeddingKnown)
	return req, nil
}

// WithOverrides returns the request with a config's override_params applied, as
// ChatRequest.WithOverrides does.
func (r *EmbeddingRequest) WithOverrides(overrides map[string]any) (*EmbeddingRequest, error) {
	if len(overrides) == 0 {
		return r, nil
	}
	out := *r
	if err := override(&out, parsed{&out.Raw, &out.members, &out.Extra}, overrides, embeddingFields, embeddingKnown); err != nil {
		return nil, err
	}
	return &out, nil
}
