package openai

import "encoding/json"

// EmbeddingRequest is an embeddings body that passed validation.
type EmbeddingRequest struct {
	Model string
	// Inputs holds the inputs sent as text; InputTokenIDs counts the token ids of inputs sent
	// as arrays of token ids.
	Inputs         []string
	InputTokenIDs  int
	Dimensions     int // 0 when absent
	EncodingFormat string
	User           string
	// Raw is the body exactly as received (it shares the slice given to ParseEmbedding).
	Raw json.RawMessage
}

// ParseEmbedding validates an embeddings body: model and input are required, and input is a
// non-empty string, or a non-empty array of strings, of token ids or of token id arrays.
// encoding_format is only checked to be a string, as compatible providers add formats of their
// own (int8, binary). Unknown fields are kept in Raw.
func ParseEmbedding(body []byte) (*EmbeddingRequest, error) {
	v, top, err := decodeBody(body)
	if err != nil {
		return nil, err
	}
	req := &EmbeddingRequest{Raw: body}
	req.Model = top.model()
	if top.required("input") {
		raw, _ := top.raw("input")
		req.Inputs, req.InputTokenIDs = v.textsOrTokens(raw, "input", false)
	}
	req.Dimensions, _ = top.integer("dimensions", 1, noMax)
	req.EncodingFormat, _ = top.str("encoding_format")
	req.User, _ = top.str("user")
	if v.err != nil {
		return nil, v.err
	}
	return req, nil
}
